import { inject, injectable } from 'inversify';
import { Clock } from '../../ports/clock';
import { IdGenerator } from '../../ports/id-generator';
import { DomainError, validationError } from '../errors';
import { type PublishedWorkspaceEvent, WorkspaceEvents, type WorkspaceEventSubscription } from '../workspace-events/workspace-events';
import { WorkspaceService } from '../workspaces/workspace-service';
import { type Decision, ProcessEngine, taskNotFound } from './process-engine';
import type { RunDraft } from './process-run-draft';
import { type ProcessLogEntry, type ProcessRunRecord, type ProcessRunView, type StoredPhase, toLogEntry, toProcessRunView } from './process-run-record';
import { parseProcessSpec } from './process-spec';
import { type ApproveInput, approveSchema, type CreateProcessRunInput, createProcessRunSchema, processIdSchema } from './process-schemas';
import { requireRunAction, requireTaskAction, type RunAction } from './process-transitions';

const PAST_TENSE: Record<'start' | 'pause' | 'resume' | 'cancel', string> = { start: 'started', pause: 'paused', resume: 'resumed', cancel: 'cancelled' };

/**
 * Process runs of a workspace (docs/api.md#process-runs): create, read, list, the actions on a run
 * and on its tasks, its log and its events. Each action checks the transition table
 * (process-transitions.ts: 409 naming the state) inside the engine's transition, so it holds under
 * races too; the engine executes.
 */
@injectable()
export class ProcessRunService {
  constructor(
    @inject(ProcessEngine) private readonly engine: ProcessEngine,
    @inject(WorkspaceService) private readonly workspaces: WorkspaceService,
    @inject(WorkspaceEvents) private readonly events: WorkspaceEvents,
    @inject(IdGenerator) private readonly ids: IdGenerator,
    @inject(Clock) private readonly clock: Clock,
  ) {}

  /** A run of the spec in status `created`; 400 naming what to fix in an invalid spec. */
  async create(accountId: string, workspaceId: string, processId: string, body: CreateProcessRunInput): Promise<ProcessRunView> {
    const parsedId = processIdSchema.safeParse(processId);
    if (!parsedId.success) throw DomainError.invalid(`invalid processId: ${parsedId.error.issues[0]!.message}`, [{ path: 'processId', message: parsedId.error.issues[0]!.message }]);
    const parsed = createProcessRunSchema.safeParse(body ?? {});
    if (!parsed.success) throw validationError(parsed.error);
    const spec = parseProcessSpec(parsed.data.spec);
    await this.workspaces.requireWritable(accountId, workspaceId);
    const phases: StoredPhase[] = spec.phases.map((phase) => ({
      id: phase.id,
      name: phase.name,
      status: 'pending',
      tasks: phase.tasks.map((task) => ({
        id: task.id,
        name: task.name,
        type: task.type,
        status: 'pending',
        attempts: 0,
        output: null,
        error: null,
        started_at: null,
        completed_at: null,
        state: { budget_from: 0, retry_at: null, due_at: null, child_id: null },
      })),
    }));
    const run: ProcessRunRecord = {
      id: this.ids.newId(),
      account_id: accountId,
      workspace_id: workspaceId,
      process_id: processId,
      status: 'created',
      spec,
      inputs: parsed.data.inputs,
      metadata: parsed.data.metadata,
      instructions: parsed.data.instructions,
      model: parsed.data.model ?? null,
      phases,
      created_at: this.clock.now().toISOString(),
      started_at: null,
      completed_at: null,
      revision: 1,
      log_seq: 0,
    };
    await this.engine.create(run);
    return toProcessRunView(run);
  }

  /** The process's runs in the workspace (every process's when `processId` is undefined), newest first. */
  async list(accountId: string, workspaceId: string, processId: string | undefined, page: { limit: number; offset: number } = { limit: 50, offset: 0 }): Promise<ProcessRunView[]> {
    await this.workspaces.require(accountId, workspaceId);
    const records = await this.engine.runs.find(accountId, {
      where: { workspace_id: workspaceId, ...(processId === undefined ? {} : { process_id: processId }) },
      orderBy: [
        { field: 'created_at', direction: 'desc' },
        { field: 'id', direction: 'desc' },
      ],
      limit: page.limit,
      offset: page.offset,
    });
    return records.map(toProcessRunView);
  }

  async get(accountId: string, workspaceId: string, runId: string): Promise<ProcessRunView> {
    return toProcessRunView(await this.require(accountId, workspaceId, runId));
  }

  /** `start`, `pause`, `resume` or `cancel`, with a message saying what happened. */
  async act(accountId: string, workspaceId: string, runId: string, action: 'start' | 'pause' | 'resume' | 'cancel'): Promise<{ message: string; data: ProcessRunView }> {
    const record = await this.change(accountId, workspaceId, runId, action, (draft) => {
      if (action === 'start') draft.moveRun('running');
      else if (action === 'pause') draft.moveRun('paused');
      else if (action === 'resume') draft.moveRun('running');
      else this.cancel(draft);
    });
    return { message: `process run ${runId} ${PAST_TENSE[action]}`, data: toProcessRunView(record) };
  }

  /**
   * Decides the waiting approval named by `phaseId`/`taskId`, or every waiting one when none is
   * named. 409 when the run waits on no approval, or the named task does not wait.
   */
  async approve(accountId: string, workspaceId: string, runId: string, body: ApproveInput = {}): Promise<{ message: string; data: ProcessRunView }> {
    const parsed = approveSchema.safeParse(body ?? {});
    if (!parsed.success) throw validationError(parsed.error);
    const { phaseId, taskId, decision, comment } = parsed.data;
    if ((phaseId === undefined) !== (taskId === undefined)) {
      throw DomainError.invalid('name the approval with both phaseId and taskId, or neither', [{ path: phaseId === undefined ? 'phaseId' : 'taskId', message: 'give phaseId and taskId together' }]);
    }
    let decided: string[] = [];
    const record = await this.change(accountId, workspaceId, runId, 'approve', (draft) => {
      const refs = phaseId !== undefined ? [this.task(draft, phaseId, taskId!)] : [...draft.tasks()].filter((ref) => ref.task.status === 'waiting_approval');
      decided = [];
      for (const ref of refs) {
        requireTaskAction(ref.phase.id, ref.task.id, ref.task.status, 'approve');
        this.engine.decide(draft, ref, decision as Decision, comment ?? null, decision === 'approve' ? 'approved' : 'rejected');
        decided.push(`${ref.phase.id}/${ref.task.id}`);
      }
    });
    return { message: `${decision === 'approve' ? 'approved' : 'rejected'} ${decided.join(', ')}`, data: toProcessRunView(record) };
  }

  /** Runs a failed task again (a pending one at once): a new attempt with its retry policy's count restarted. */
  async retryTask(accountId: string, workspaceId: string, runId: string, phaseId: string, taskId: string): Promise<{ message: string; data: ProcessRunView }> {
    const record = await this.change(accountId, workspaceId, runId, 'retry', (draft) => {
      const ref = this.task(draft, phaseId, taskId);
      requireTaskAction(phaseId, taskId, ref.task.status, 'retry');
      ref.task.state = { ...ref.task.state, budget_from: ref.task.attempts, retry_at: null };
      draft.touch(ref.task);
      if (ref.task.status === 'failed') draft.moveTask(ref, 'pending', { error: null }, 'retry requested');
    });
    return { message: `task ${phaseId}/${taskId} of process run ${runId} will run again`, data: toProcessRunView(record) };
  }

  /** Skips a failed or pending task: it counts as done for the tasks that need it. */
  async skipTask(accountId: string, workspaceId: string, runId: string, phaseId: string, taskId: string): Promise<{ message: string; data: ProcessRunView }> {
    const record = await this.change(accountId, workspaceId, runId, 'skip', (draft) => {
      const ref = this.task(draft, phaseId, taskId);
      requireTaskAction(phaseId, taskId, ref.task.status, 'skip');
      ref.task.state.retry_at = null;
      draft.moveTask(ref, 'skipped', {}, 'skip requested');
    });
    return { message: `task ${phaseId}/${taskId} of process run ${runId} skipped`, data: toProcessRunView(record) };
  }

  /** The run's log: transitions and task output lines, oldest first. */
  async logs(accountId: string, workspaceId: string, runId: string): Promise<ProcessLogEntry[]> {
    await this.require(accountId, workspaceId, runId);
    const records = await this.engine.logs.find(accountId, { where: { run_id: runId }, orderBy: [{ field: 'seq' }] });
    return records.map(toLogEntry);
  }

  /**
   * The run now, then its changes as they happen (`process.run.updated`, `task.updated`) until
   * `handler` unsubscribes. Subscribed before the run is read, so no change slips between.
   */
  async follow(
    accountId: string,
    workspaceId: string,
    runId: string,
    handler: (event: PublishedWorkspaceEvent['event']) => void,
  ): Promise<{ run: ProcessRunView; subscription: WorkspaceEventSubscription }> {
    await this.require(accountId, workspaceId, runId);
    const buffered: PublishedWorkspaceEvent['event'][] = [];
    let deliver = (event: PublishedWorkspaceEvent['event']): void => void buffered.push(event);
    const subscription = this.events.subscribe(workspaceId, ({ event }) => {
      if (event.run_id === runId && (event.type === 'process.run.updated' || event.type === 'task.updated')) deliver(event);
    });
    try {
      const run = await this.get(accountId, workspaceId, runId);
      deliver = handler;
      for (const event of buffered) handler(event);
      return { run, subscription };
    } catch (error) {
      subscription.unsubscribe();
      throw error;
    }
  }

  private cancel(draft: RunDraft): void {
    for (const ref of draft.tasks()) {
      if (ref.task.status === 'pending' || ref.task.status === 'running' || ref.task.status === 'waiting_approval') draft.moveTask(ref, 'cancelled', {}, 'run cancelled');
    }
    draft.moveRun('cancelled');
    draft.cancelled = true;
  }

  /** A transition of a run of the workspace, refused (409) unless the run's status allows `action`. */
  private async change(accountId: string, workspaceId: string, runId: string, action: RunAction, apply: (draft: RunDraft) => void): Promise<ProcessRunRecord> {
    await this.require(accountId, workspaceId, runId);
    return this.engine.mutate(accountId, runId, (draft) => {
      requireRunAction(runId, draft.run.status, action);
      apply(draft);
    });
  }

  private task(draft: RunDraft, phaseId: string, taskId: string): NonNullable<ReturnType<RunDraft['find']>> {
    const ref = draft.find(phaseId, taskId);
    if (!ref) throw taskNotFound(phaseId, taskId);
    return ref;
  }

  private async require(accountId: string, workspaceId: string, runId: string): Promise<ProcessRunRecord> {
    await this.workspaces.require(accountId, workspaceId);
    const run = await this.engine.runs.get(accountId, runId);
    if (!run || run.workspace_id !== workspaceId) throw DomainError.notFound(`process run ${runId}`);
    return run;
  }
}
