import { inject, injectable } from 'inversify';
import { Clock, type Timer } from '../../ports/clock';
import { Database, type Migration, WriteConflictError, type WriteOp } from '../../ports/database';
import { type JobContext, JobQueue, type JobRetryPolicy } from '../../ports/job-queue';
import { Logger } from '../../ports/logger';
import { DomainError } from '../errors';
import type { Lifecycle } from '../lifecycle';
import { describeFailure, isUnexpectedFailure, RunCancelled, RunFailure } from '../runs/run-failure';
import { Repository } from '../storage/repository';
import { WorkspaceEvents } from '../workspace-events/workspace-events';
import { type JobRequest, RunDraft, type TaskRef } from './process-run-draft';
import { type ProcessLogRecord, type ProcessRunRecord, type TaskError, toProcessRunView, toTaskView } from './process-run-record';
import type { RetryPolicy, TaskSpec } from './process-spec';
import { ProcessTaskExecutor, type TaskOutcome } from './process-task-executor';

export const PROCESS_RUNS_COLLECTION = 'process_runs';
export const PROCESS_LOGS_COLLECTION = 'process_run_logs';

export const processMigrations: Migration[] = [
  {
    id: 'processes/001-create',
    steps: [
      {
        createCollection: PROCESS_RUNS_COLLECTION,
        fields: { account_id: 'text', workspace_id: 'text', process_id: 'text', status: 'text', created_at: 'text', revision: 'integer' },
      },
      { createCollection: PROCESS_LOGS_COLLECTION, fields: { account_id: 'text', run_id: 'text', seq: 'integer' } },
    ],
  },
];

/** An attempt of a task (`prompt`, `command`, `runnable`, `wait`); the key is the payload, so it never runs twice. */
export const TASK_JOB = 'process.task';
/** The timeout of an approval task's attempt. */
export const APPROVAL_TIMEOUT_JOB = 'process.approval-timeout';
/** A durable timer that lets a run start the tasks whose retry delay has passed. */
export const WAKE_JOB = 'process.wake';

interface TaskJob {
  account_id: string;
  run_id: string;
  phase_id: string;
  task_id: string;
  attempt: number;
}

interface WakeJob {
  account_id: string;
  run_id: string;
}

/** Attempts of a job interrupted by crashes or a failing store; a task's own failures are its retry policy's. */
const JOB_RETRY: JobRetryPolicy = { maxAttempts: 5, initialBackoffMs: 500, maxBackoffMs: 5000, jitter: 0.2 };
/** Task attempts running at once in this process; waiting (`wait`, backoff, approvals) holds none. */
const TASK_CONCURRENCY = 256;
/** A transition is redone this often when another instance changed the run under it. */
const MAX_WRITE_ATTEMPTS = 8;

export type Decision = 'approve' | 'reject';

interface PendingChange {
  change(draft: RunDraft): void;
  commit?: (ops: readonly WriteOp[]) => Promise<void>;
  resolve(run: ProcessRunRecord): void;
  reject(error: unknown): void;
  /** Rejected already: left out of its batch. */
  refused?: boolean;
}

/**
 * Process runs (docs/api.md#process-runs; ARCHITECTURE.md, "Process runs"): a run is one stored
 * document changed only by `mutate`, which applies a change to a `RunDraft`, lets the run go on
 * (`settle`: phases in order, within a phase every pending task whose `needs` are done), and writes
 * the run, its log lines and — inside a job — the job's end in one conditional write. Only then are
 * the events published and the jobs the transition needs queued (keyed, so queueing twice is
 * harmless). Every wait is a stored state or a `runAt` job: a run parked on an approval, a `wait`
 * task or a retry delay holds no memory, timer or promise here. At start, every active run's jobs
 * are queued again, which covers a crash between a write and its jobs.
 */
@injectable()
export class ProcessEngine implements Lifecycle {
  readonly name = 'processes';
  readonly runs: Repository<ProcessRunRecord>;
  readonly logs: Repository<ProcessLogRecord>;
  /** Changes of each run waiting to be written, in order; a run is here while its changes are drained. */
  private readonly pending = new Map<string, PendingChange[]>();
  /** Task attempts executing in this process, by run: to abort on cancel. */
  private readonly executing = new Map<string, Set<AbortController>>();

  constructor(
    @inject(Database) private readonly database: Database,
    @inject(JobQueue) private readonly queue: JobQueue,
    @inject(WorkspaceEvents) private readonly events: WorkspaceEvents,
    @inject(ProcessTaskExecutor) private readonly executor: ProcessTaskExecutor,
    @inject(Clock) private readonly clock: Clock,
    @inject(Logger) private readonly logger: Logger,
  ) {
    this.runs = new Repository(database, PROCESS_RUNS_COLLECTION);
    this.logs = new Repository(database, PROCESS_LOGS_COLLECTION);
  }

  async start(): Promise<void> {
    this.queue.register<TaskJob>(TASK_JOB, (job, context) => this.runTask(job, context), { concurrency: TASK_CONCURRENCY });
    this.queue.register<TaskJob>(APPROVAL_TIMEOUT_JOB, (job, context) => this.timeOutApproval(job, context));
    this.queue.register<WakeJob>(WAKE_JOB, (job, context) => this.mutate(job.account_id, job.run_id, () => {}, (ops) => context.complete(ops)).then(() => {}));
    await this.requeueActiveRuns();
  }

  /** Stores a new run with its first log line. */
  async create(run: ProcessRunRecord): Promise<void> {
    const draft = new RunDraft(run, this.clock.now());
    draft.logs.push({ type: 'transition', phase_id: null, task_id: null, message: `run created (${run.spec.phases.length} phases)` });
    const logOps = this.logOps(run, draft);
    await this.database.write([this.runs.insertOp({ ...run, log_seq: run.log_seq + draft.logs.length }), ...logOps]);
    await this.publish(run, draft);
  }

  /**
   * Applies `change` to the run (it may throw a `DomainError` refusing it), lets the run go on, and
   * writes the run with its log lines when anything changed; resolves with the run as written.
   * Changes of one run queue up in this process and each batch of them is applied to one draft and
   * written once (the tasks of a phase ending together cost one write, not ten). A change given
   * `commit` (a task job's `complete`) ends its job: the first such in a batch carries the batch's
   * write (the job ends atomically with the outcome); the others' jobs end when their handlers
   * return, after the outcome is durable, and a job offered again then finds its task moved on.
   * Redone on a concurrent change by another instance. Then publishes the changes, queues the jobs
   * the transition needs and aborts the run's running tasks here when it was cancelled.
   */
  mutate(accountId: string, runId: string, change: (draft: RunDraft) => void, commit?: (ops: readonly WriteOp[]) => Promise<void>): Promise<ProcessRunRecord> {
    return new Promise((resolve, reject) => {
      const item: PendingChange = { change, commit, resolve, reject };
      const waiting = this.pending.get(runId);
      if (waiting) {
        waiting.push(item);
        return;
      }
      this.pending.set(runId, [item]);
      void this.drain(accountId, runId);
    });
  }

  /** Writes the run's queued changes, a batch at a time, until none is left. */
  private async drain(accountId: string, runId: string): Promise<void> {
    for (let batch = this.pending.get(runId)!.splice(0); batch.length > 0; batch = this.pending.get(runId)!.splice(0)) {
      try {
        const { record, draft } = await this.writeBatch(accountId, runId, batch);
        if (draft.changed) {
          if (draft.cancelled) for (const controller of this.executing.get(runId) ?? []) controller.abort(new RunCancelled());
          // Not awaited: the bus keeps the call order, and the next transition need not wait for it.
          void this.publish(record, draft);
          await this.queueJobs(draft.jobs);
        }
        for (const item of batch) if (!item.refused) item.resolve(record);
      } catch (error) {
        for (const item of batch) if (!item.refused) item.reject(error);
      }
    }
    this.pending.delete(runId);
  }

  private async writeBatch(accountId: string, runId: string, batch: PendingChange[]): Promise<{ record: ProcessRunRecord; draft: RunDraft }> {
    for (let attempt = 1; ; ) {
      const current = await this.runs.require(accountId, runId, `process run ${runId}`);
      const draft = new RunDraft(structuredClone(current), this.clock.now());
      const refused = batch.find((item) => !item.refused && !this.applies(item, draft));
      // A refusal may have left the draft half changed: start again without it.
      if (refused) continue;
      this.settle(draft);
      const committer = batch.find((item) => !item.refused && item.commit !== undefined);
      const next: ProcessRunRecord = { ...draft.run, revision: current.revision + 1, log_seq: current.log_seq + draft.logs.length };
      const ops = draft.changed ? [this.runs.replaceOp(next, { revision: current.revision }), ...this.logOps(current, draft)] : [];
      try {
        if (committer) await committer.commit!(ops);
        else if (ops.length > 0) await this.database.write(ops);
      } catch (error) {
        const runConflict = error instanceof WriteConflictError && error.collection === PROCESS_RUNS_COLLECTION;
        if (runConflict && attempt < MAX_WRITE_ATTEMPTS) {
          attempt += 1;
          continue;
        }
        // The committing job is no longer this worker's (cancelled, lease lost): the rest go on without it.
        if (!runConflict && committer && batch.some((item) => item !== committer && !item.refused)) {
          committer.refused = true;
          committer.reject(error);
          continue;
        }
        throw error;
      }
      return { record: draft.changed ? next : current, draft };
    }
  }

  /** Applies one queued change; false (and the change rejected) when it refuses. */
  private applies(item: PendingChange, draft: RunDraft): boolean {
    try {
      item.change(draft);
      return true;
    } catch (error) {
      item.refused = true;
      item.reject(error);
      return false;
    }
  }

  /** Ends a waiting approval as decided: approved, it succeeds; rejected, it fails (no retry policy applies). */
  decide(draft: RunDraft, ref: TaskRef, decision: Decision, comment: string | null, why: string): void {
    const output = { decision, comment };
    if (decision === 'approve') draft.moveTask(ref, 'succeeded', { output, error: null }, why);
    else draft.moveTask(ref, 'failed', { output, error: { code: 'rejected', message: `the approval was rejected (${why})${comment ? `: ${comment}` : ''}` } }, why);
  }

  /**
   * Lets the run go on after a change: the run's status follows from its tasks (a failed task
   * fails it; every phase done succeeds it; a waiting approval parks it), and a running run starts
   * the ready tasks of its current phase.
   */
  private settle(draft: RunDraft): void {
    draft.refreshPhases();
    this.deriveStatus(draft);
    if (draft.run.status === 'running' || draft.run.status === 'waiting_approval') {
      this.startReady(draft);
      draft.refreshPhases();
      this.deriveStatus(draft);
    }
  }

  private deriveStatus(draft: RunDraft): void {
    const run = draft.run;
    if (run.status === 'created' || run.status === 'succeeded' || run.status === 'cancelled') return;
    const tasks = [...draft.tasks()].map((ref) => ref.task);
    if (run.phases.every((phase) => phase.status === 'succeeded' || phase.status === 'skipped')) draft.moveRun('succeeded');
    else if (tasks.some((task) => task.status === 'failed')) draft.moveRun('failed');
    else if (run.status === 'paused') return;
    else if (tasks.some((task) => task.status === 'waiting_approval')) draft.moveRun('waiting_approval');
    else draft.moveRun('running');
  }

  /** Starts the pending tasks of the first unfinished phase whose needs are done and whose retry delay has passed. */
  private startReady(draft: RunDraft): void {
    const current = draft.run.phases.find((phase) => phase.status !== 'succeeded' && phase.status !== 'skipped');
    if (!current) return;
    for (const ref of draft.tasks()) {
      if (ref.phase !== current || ref.task.status !== 'pending' || !draft.needsMet(ref)) continue;
      const retryAt = ref.task.state.retry_at;
      if (retryAt !== null && retryAt > draft.nowMs) {
        draft.job({ kind: WAKE_JOB, key: `${draft.run.id}:${retryAt}`, payload: { account_id: draft.run.account_id, run_id: draft.run.id }, runAt: retryAt });
        continue;
      }
      this.startTask(draft, ref);
    }
  }

  private startTask(draft: RunDraft, ref: TaskRef): void {
    const { task, spec } = ref;
    Object.assign(task, { attempts: task.attempts + 1, started_at: draft.now.toISOString(), completed_at: null, output: null, error: null });
    task.state = { ...task.state, retry_at: null, due_at: null, child_id: null };
    const note = `attempt ${task.attempts}`;
    if (spec.type === 'approval') {
      draft.moveTask(ref, 'waiting_approval', {}, note);
      const timeout = (spec as TaskSpec<'approval'>).input.timeout_seconds;
      if (timeout !== undefined) draft.job(this.taskJob(draft, ref, APPROVAL_TIMEOUT_JOB, draft.nowMs + timeout * 1000));
      return;
    }
    if (spec.type === 'wait') task.state.due_at = draft.nowMs + (spec as TaskSpec<'wait'>).input.seconds * 1000;
    draft.moveTask(ref, 'running', {}, note);
    draft.job(this.taskJob(draft, ref, TASK_JOB, task.state.due_at ?? undefined));
  }

  private taskJob(draft: RunDraft, ref: TaskRef, kind: string, runAt?: number): JobRequest {
    const payload: TaskJob = { account_id: draft.run.account_id, run_id: draft.run.id, phase_id: ref.phase.id, task_id: ref.task.id, attempt: ref.task.attempts };
    return { kind, key: `${payload.run_id}:${payload.phase_id}:${payload.task_id}:${payload.attempt}`, payload, ...(runAt === undefined ? {} : { runAt }) };
  }

  /**
   * A task attempt's job: executes it unless the run moved on (cancelled, retried, skipped), and
   * writes its outcome with the job's end. The queue stopping hands the job back (the attempt is
   * resumed after a restart: a runnable task then follows the run it had started).
   */
  private async runTask(job: TaskJob, context: JobContext): Promise<void> {
    const run = await this.runs.get(job.account_id, job.run_id);
    const ref = run && new RunDraft(run, this.clock.now()).find(job.phase_id, job.task_id);
    if (!run || !ref || ref.task.status !== 'running' || ref.task.attempts !== job.attempt) {
      await context.complete([]);
      return;
    }
    const outcome = ref.spec.type === 'wait' ? ({ output: null, lines: [] } satisfies TaskOutcome) : await this.execute(run, ref, context);
    await this.mutate(
      job.account_id,
      job.run_id,
      (draft) => {
        const current = draft.find(job.phase_id, job.task_id);
        if (!current || current.task.status !== 'running' || current.task.attempts !== job.attempt) return;
        if ('error' in outcome) this.fail(draft, current, outcome.error);
        else {
          draft.moveTask(current, 'succeeded', { output: outcome.output, error: null });
          draft.logOutput(current, outcome.lines);
        }
      },
      (ops) => context.complete(ops),
    );
  }

  private async execute(run: ProcessRunRecord, ref: TaskRef, context: JobContext): Promise<TaskOutcome | { error: TaskError }> {
    const controller = new AbortController();
    const running = this.executing.get(run.id) ?? new Set();
    this.executing.set(run.id, running.add(controller));
    const seconds = ref.spec.timeout_seconds;
    let timer: Timer | undefined;
    if (seconds !== undefined) {
      timer = this.clock.setTimeout(() => controller.abort(new RunFailure('timeout', `task '${ref.task.id}' did not finish within its timeout of ${seconds} s`)), seconds * 1000);
    }
    try {
      return await this.executor.execute({
        run,
        task: ref.task,
        spec: ref.spec,
        signal: AbortSignal.any([controller.signal, context.signal]),
        rememberChild: async (childId) => {
          await this.mutate(run.account_id, run.id, (draft) => {
            const current = draft.find(ref.phase.id, ref.task.id);
            if (!current || current.task.attempts !== ref.task.attempts) return;
            current.task.state.child_id = childId;
            draft.touch(current.task);
          });
        },
      });
    } catch (error) {
      // The queue is stopping: hand the job back, the attempt resumes after the restart.
      if (context.signal.aborted && !controller.signal.aborted) throw error;
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : error;
      if (isUnexpectedFailure(reason)) this.logger.error({ runId: run.id, task: `${ref.phase.id}/${ref.task.id}`, error: messageOf(reason) }, 'process task failed on an unexpected error');
      return { error: describeFailure(reason) };
    } finally {
      timer?.cancel();
      running.delete(controller);
      if (running.size === 0) this.executing.delete(run.id);
    }
  }

  /** A failed attempt: pending until its retry when the policy has attempts left, else failed. */
  private fail(draft: RunDraft, ref: TaskRef, error: TaskError): void {
    const policy = ref.spec.retry;
    const used = ref.task.attempts - ref.task.state.budget_from;
    if (policy && used < policy.max_attempts) {
      const delayMs = retryDelaySeconds(policy, used) * 1000;
      ref.task.state.retry_at = draft.nowMs + delayMs;
      draft.moveTask(ref, 'pending', { error }, `attempt ${ref.task.attempts} failed (${error.message}); retrying in ${delayMs / 1000} s`);
    } else {
      draft.moveTask(ref, 'failed', { error }, error.message);
    }
  }

  private async timeOutApproval(job: TaskJob, context: JobContext): Promise<void> {
    await this.mutate(
      job.account_id,
      job.run_id,
      (draft) => {
        const ref = draft.find(job.phase_id, job.task_id);
        if (!ref || ref.task.status !== 'waiting_approval' || ref.task.attempts !== job.attempt) return;
        const { timeout_seconds, timeout_outcome } = (ref.spec as TaskSpec<'approval'>).input;
        this.decide(draft, ref, timeout_outcome, null, `no decision within ${timeout_seconds} s`);
      },
      (ops) => context.complete(ops),
    );
  }

  /** Queues again the jobs of every active run (keyed: the ones that exist stand). */
  private async requeueActiveRuns(): Promise<void> {
    const active = (await this.database.find(PROCESS_RUNS_COLLECTION, {
      where: { status: { in: ['running', 'waiting_approval', 'paused'] } },
      orderBy: [{ field: 'created_at' }],
    })) as ProcessRunRecord[];
    for (const run of active) {
      const draft = new RunDraft(run, this.clock.now());
      for (const ref of draft.tasks()) {
        const { task, spec } = ref;
        if (task.status === 'running') draft.job(this.taskJob(draft, ref, TASK_JOB, task.state.due_at ?? undefined));
        const timeout = spec.type === 'approval' ? (spec as TaskSpec<'approval'>).input.timeout_seconds : undefined;
        if (task.status === 'waiting_approval' && timeout !== undefined) {
          draft.job(this.taskJob(draft, ref, APPROVAL_TIMEOUT_JOB, Date.parse(task.started_at!) + timeout * 1000));
        }
        if (task.status === 'pending' && task.state.retry_at !== null) {
          draft.job({ kind: WAKE_JOB, key: `${run.id}:${task.state.retry_at}`, payload: { account_id: run.account_id, run_id: run.id }, runAt: task.state.retry_at });
        }
      }
      await this.queueJobs(draft.jobs);
    }
  }

  /** Queues jobs together (each keyed: one that exists stands); a failure is logged, and the next start queues it again. */
  private async queueJobs(jobs: readonly JobRequest[]): Promise<void> {
    await Promise.all(
      jobs.map((job) =>
        this.queue.enqueue(job.kind, job.payload, { key: job.key, retry: JOB_RETRY, ...(job.runAt === undefined ? {} : { runAt: new Date(job.runAt) }) }).catch((error: unknown) => {
          this.logger.error({ job: job.key, error: messageOf(error) }, 'queueing a process job failed');
        }),
      ),
    );
  }

  private logOps(before: ProcessRunRecord, draft: RunDraft): WriteOp[] {
    const at = draft.now.toISOString();
    return draft.logs.map((entry, index) => {
      const seq = before.log_seq + index + 1;
      const record: ProcessLogRecord = { id: `${before.id}:${String(seq).padStart(8, '0')}`, account_id: before.account_id, run_id: before.id, seq, at, ...entry };
      return this.logs.insertOp(record);
    });
  }

  /**
   * `task.updated` for each changed task, then `process.run.updated`, on the workspace's stream:
   * published together (the bus numbers them in call order and stores them in one write).
   */
  private async publish(run: ProcessRunRecord, draft: RunDraft): Promise<void> {
    const base = { run_id: run.id, process_id: run.process_id };
    const published = run.phases.flatMap((phase) =>
      phase.tasks
        .filter((task) => draft.changedTasks.has(task))
        .map((task) => this.events.publish(run.workspace_id, { type: 'task.updated', ...base, phase_id: phase.id, task_id: task.id, status: task.status, task: toTaskView(task) })),
    );
    published.push(this.events.publish(run.workspace_id, { type: 'process.run.updated', ...base, status: run.status, run: toProcessRunView(run) }));
    try {
      await Promise.all(published);
    } catch (error) {
      this.logger.warn({ runId: run.id, error: messageOf(error) }, 'publishing a process run change failed');
    }
  }
}

/** Seconds before the attempt after failed attempt `attempt` (1-based) of the policy's count. */
export function retryDelaySeconds(policy: RetryPolicy, attempt: number): number {
  const delay = policy.initial_interval_seconds * policy.backoff_coefficient ** (attempt - 1);
  return Math.min(delay, policy.maximum_interval_seconds ?? Number.POSITIVE_INFINITY);
}

/** The refusal of an action on a task the run does not have. */
export function taskNotFound(phaseId: string, taskId: string): DomainError {
  return DomainError.notFound(`task ${phaseId}/${taskId}`);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
