import { inject, injectable } from 'inversify';
import { RunloomConfig } from '../../config';
import { Clock } from '../../ports/clock';
import { Database, type Migration, WriteConflictError } from '../../ports/database';
import { EventBus } from '../../ports/event-bus';
import { IdGenerator } from '../../ports/id-generator';
import { type JobContext, JobQueue, type JobRetryPolicy } from '../../ports/job-queue';
import { Logger } from '../../ports/logger';
import { DomainError, validationError } from '../errors';
import type { Lifecycle } from '../lifecycle';
import { Repository } from '../storage/repository';
import { ThreadService } from '../threads/thread-service';
import { type FollowedSource, LiveRelay } from '../workspace-events/live-relay';
import { WorkspaceEvents, type WorkspaceEventSubscription } from '../workspace-events/workspace-events';
import { WorkspaceConfigService } from '../workspaces/workspace-config-service';
import { WorkspaceService } from '../workspaces/workspace-service';
import { CommandRunners, ExecutionCancelled, latestProcessRun, noProcessSpec, ProcessRuns, type RunnerOutcome, shellCommandsDisabled } from './command-runners';
import { type CommandExecution, type CommandModel, DEFAULT_MAX_OUTPUT_BYTES, type ExecuteCommandInput, executeCommandSchema } from './command-schemas';
import { type CommandIndexRecord, CommandService } from './command-service';
import type { CommandFile } from './command-files';
import { EXECUTIONS, type ExecutionFailure, type ExecutionRecord, isFinished, toExecutionView } from './execution-record';
import { type LiveOutput, LiveOutputs } from './live-output';
import { withToolResult } from './thread-tool-result';

export const COMMAND_EXECUTION_JOB = 'command.execute';

export const executionMigrations: Migration[] = [
  {
    id: 'command-executions/001-create',
    steps: [{ createCollection: EXECUTIONS, fields: { account_id: 'text', workspace_id: 'text', trigger: 'text', status: 'text', created_at: 'text' } }],
  },
];

interface ExecutionJob {
  account_id: string;
  execution_id: string;
}

/** How often a wait for an execution that is not running here reads its record again. */
const RECHECK_MS = 2000;
/** Attempts of an execution's job: resumptions after a crash or a stop, then it fails. */
const MAX_ATTEMPTS = 3;
/** Retries of a handler that threw (the store failed while writing a transition), as runs' jobs. */
const JOB_RETRY: JobRetryPolicy = { maxAttempts: MAX_ATTEMPTS, initialBackoffMs: 500, maxBackoffMs: 5000, jitter: 0.2 };
/** An execution races a concurrent use of its command this many times before giving up (409). */
const EXECUTE_ATTEMPTS = 4;

/** What `follow` yields: the execution's status (first its state now), then its output as it comes. */
export type ExecutionEvent = { type: 'status'; execution: CommandExecution } | { type: 'output'; text: string };

/** What an execution's output is relayed under to other instances (`LiveRelay`). */
function outputKey(executionId: string): string {
  return `command-execution:${executionId}`;
}

/** The bus topic of an execution's status changes (in-process listeners: waits, event streams). */
function executionTopic(executionId: string): string {
  return `command-execution:${executionId}`;
}

/**
 * Executions of workspace commands (docs/api.md#commands): `execute` stores a `queued` execution
 * and its durable job (`command.execute`) in one write, with the command's usage; the job runs it
 * through `CommandRunners` (`queued → running → succeeded | failed | cancelled`), each transition a
 * conditional write, so a cancel racing the end ends in exactly one final state. Every transition
 * is published as `command.execution.updated` on the workspace's events.
 *
 * After a crash the queue offers the job again: a prompt is asked again, a runnable execution
 * follows the run it started; a shell command that was running is NOT run again — it may have done
 * half of something that must not happen twice (a deploy, a migration) — it fails with
 * `interrupted`, saying so.
 *
 * Also the service process runs call for `command` tasks: `execute`, then `waitForEnd`.
 */
@injectable()
export class CommandExecutionService implements Lifecycle {
  readonly name = 'command-executions';
  private readonly executions: Repository<ExecutionRecord>;
  private readonly live = new LiveOutputs();
  /** Executions running in this process, to abort on cancel. */
  private readonly running = new Map<string, AbortController>();

  constructor(
    @inject(Database) private readonly database: Database,
    @inject(JobQueue) private readonly queue: JobQueue,
    @inject(CommandService) private readonly commands: CommandService,
    @inject(CommandRunners) private readonly runners: CommandRunners,
    @inject(WorkspaceService) private readonly workspaces: WorkspaceService,
    @inject(WorkspaceConfigService) private readonly workspaceConfigs: WorkspaceConfigService,
    @inject(WorkspaceEvents) private readonly workspaceEvents: WorkspaceEvents,
    @inject(ThreadService) private readonly threads: ThreadService,
    @inject(ProcessRuns) private readonly processRuns: ProcessRuns,
    @inject(EventBus) private readonly bus: EventBus,
    @inject(IdGenerator) private readonly ids: IdGenerator,
    @inject(Clock) private readonly clock: Clock,
    @inject(Logger) private readonly logger: Logger,
    @inject(RunloomConfig) private readonly config: RunloomConfig,
    @inject(LiveRelay) private readonly relay: LiveRelay,
  ) {
    this.executions = new Repository(database, EXECUTIONS);
  }

  async start(): Promise<void> {
    this.queue.register<ExecutionJob>(COMMAND_EXECUTION_JOB, (job, context) => this.runJob(job, context));
  }

  /**
   * Checks the args against the command's declared args (400 naming what is wrong), refuses a
   * shell command unless enabled (403) and a prompt without a model (400 naming what to set), then
   * queues the execution. Answers at once: `{runId, status: 'queued'}`.
   */
  async execute(accountId: string, workspaceId: string, trigger: string, input: ExecuteCommandInput): Promise<{ runId: string; status: CommandExecution['status'] }> {
    const parsed = executeCommandSchema.safeParse(input ?? {});
    if (!parsed.success) throw validationError(parsed.error);
    const request = parsed.data;
    await this.workspaces.requireWritable(accountId, workspaceId);
    // The thread must exist now (404 otherwise), so the result has somewhere to go.
    if (request.threadId !== undefined) await this.threads.get(accountId, workspaceId, request.threadId);
    for (let attempt = 1; ; attempt++) {
      const indexed = await this.commands.requireRecord(accountId, workspaceId, trigger);
      const record = await this.newExecution(indexed, request);
      try {
        await this.queue.enqueue<ExecutionJob>(
          COMMAND_EXECUTION_JOB,
          { account_id: accountId, execution_id: record.id },
          { key: record.id, retry: JOB_RETRY, with: [this.executions.insertOp(record), this.commands.usageOp(indexed, record.created_at)] },
        );
        await this.published(record);
        return { runId: record.id, status: record.status };
      } catch (error) {
        if (!(error instanceof WriteConflictError) || attempt === EXECUTE_ATTEMPTS) {
          if (error instanceof WriteConflictError) throw DomainError.conflict(`command '${trigger}' is being changed or executed concurrently; retry`);
          throw error;
        }
      }
    }
  }

  /** The execution (404 unless it is one of this command of this workspace of the account). */
  async get(accountId: string, workspaceId: string, trigger: string, executionId: string): Promise<CommandExecution> {
    return this.view(await this.requireExecution(accountId, workspaceId, trigger, executionId));
  }

  /**
   * Cancels a queued or running execution: it ends `cancelled` at once and a running shell
   * command's whole process group is killed. 409 naming the status once it has finished.
   */
  async cancel(accountId: string, workspaceId: string, trigger: string, executionId: string): Promise<CommandExecution> {
    for (let attempt = 1; attempt <= EXECUTE_ATTEMPTS; attempt++) {
      const record = await this.requireExecution(accountId, workspaceId, trigger, executionId);
      if (isFinished(record.status)) {
        throw DomainError.conflict(`execution ${executionId} is already ${record.status}; only a queued or running execution can be cancelled`);
      }
      // Running on another instance: cancelled there, with the output it has; here only when it does not answer.
      if (record.status === 'running' && !this.running.has(executionId) && (await this.relay.cancel(workspaceId, outputKey(executionId)))) {
        const there = await this.requireExecution(accountId, workspaceId, trigger, executionId);
        if (there.status === 'cancelled') return toExecutionView(there);
        continue;
      }
      const cancelled = new ExecutionCancelled();
      const output = this.live.get(executionId);
      const final = this.finalRecord(record, { status: 'cancelled', error: cancelled.failure }, output);
      try {
        await this.executions.replace(final, { status: record.status });
      } catch (error) {
        if (error instanceof WriteConflictError) continue;
        throw error;
      }
      this.running.get(executionId)?.abort(cancelled);
      await this.ended(final);
      return toExecutionView(final);
    }
    throw DomainError.conflict(`execution ${executionId} kept changing status while being cancelled; read it and retry`);
  }

  /**
   * The execution once finished, whoever runs it (for process runs' command tasks); undefined when
   * `signal` aborts first.
   */
  async waitForEnd(executionId: string, signal?: AbortSignal): Promise<CommandExecution | undefined> {
    for await (const event of this.watch(executionId, signal, false)) {
      if (event.type === 'status' && isFinished(event.execution.status)) return event.execution;
    }
    return undefined;
  }

  /**
   * The execution's status now, then its output and status changes as they happen, until it has
   * finished or `signal` aborts (404 as `get`).
   */
  async follow(accountId: string, workspaceId: string, trigger: string, executionId: string, signal?: AbortSignal): Promise<AsyncIterable<ExecutionEvent>> {
    await this.requireExecution(accountId, workspaceId, trigger, executionId);
    return this.watch(executionId, signal, true);
  }

  /**
   * The events of an execution: its status now, then each change; with `withOutput`, its output
   * too, as `output` events (status events then carry none). Listens to status changes before
   * reading the record, and takes the live output's text and its later chunks in one synchronous
   * step, so nothing is lost or repeated between what was there and what comes.
   */
  private async *watch(executionId: string, signal: AbortSignal | undefined, withOutput: boolean): AsyncIterable<ExecutionEvent> {
    const pending: ExecutionEvent[] = [];
    let wake: (() => void) | undefined;
    const push = (event: ExecutionEvent): void => {
      pending.push(event);
      wake?.();
    };
    let outputSeen = false;
    let outputFollow: { unsubscribe(): void } | undefined;
    let relayed: FollowedSource | undefined;
    const attach = (record?: ExecutionRecord): void => {
      if (!withOutput || outputSeen || relayed) return;
      const output = this.live.get(executionId);
      if (output) {
        outputSeen = true;
        if (output.text !== '') push({ type: 'output', text: output.text });
        outputFollow = output.follow((text) => push({ type: 'output', text }));
      } else if (record?.status === 'running') {
        // Running on another instance: its output relayed from there from the first byte, its end read from the record.
        relayed = this.relay.follow(record.workspace_id, outputKey(executionId), {
          items: (texts) => {
            outputSeen = true;
            push({ type: 'output', text: texts.join('') });
          },
          end: () => recheck(),
        });
      }
    };
    let lastStatus: CommandExecution['status'] | undefined;
    const status = (execution: CommandExecution): void => {
      lastStatus = execution.status;
      if (!withOutput) return push({ type: 'status', execution });
      const { output, ...rest } = execution;
      // An execution that ran elsewhere (or ended before it could be followed): its whole output at its end.
      if (isFinished(execution.status) && !outputSeen && output !== '') push({ type: 'output', text: output });
      push({ type: 'status', execution: { ...rest, output: '' } });
    };
    const subscription = this.bus.subscribe<CommandExecution>(executionTopic(executionId), (event) => {
      // The live output opens before `running` is published: follow it from here.
      if (event.data.status === 'running') attach();
      status(event.data);
    });
    // Status changes arrive on this process's bus; those of an execution run by another instance on
    // the workspace's events (shared by the instances), when the relay says it ended, and by
    // reading its record now and then.
    const recheck = (): void => {
      this.database.get(EXECUTIONS, executionId).then(
        (current) => {
          const record = current as ExecutionRecord | undefined;
          if (record && isFinished(record.status)) return status(toExecutionView(record));
          if (record) attach(record);
          wake?.();
        },
        () => wake?.(),
      );
    };
    let workspaceFollow: WorkspaceEventSubscription | undefined;
    const onAbort = (): void => wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      const record = (await this.database.get(EXECUTIONS, executionId)) as ExecutionRecord | undefined;
      if (!record) return;
      if (isFinished(record.status)) {
        // Already over: what was followed meanwhile, else the record's output, then its status.
        const followed = pending.filter((event) => event.type === 'output');
        pending.length = 0;
        if (outputSeen) pending.push(...followed);
        status(toExecutionView(record));
        yield* pending;
        return;
      }
      workspaceFollow = this.workspaceEvents.subscribe(record.workspace_id, ({ event }) => {
        const changed = event.type === 'command.execution.updated' ? (event.execution as Omit<CommandExecution, 'output'>) : undefined;
        if (changed?.id !== executionId || changed.status === lastStatus) return;
        // The final one is read whole (its output); a change on the way is passed on.
        if (isFinished(changed.status)) return recheck();
        attach({ ...record, status: changed.status });
        status({ ...changed, output: '' });
      });
      attach(record);
      const meanwhile = pending.splice(0);
      status(toExecutionView(record));
      // The state now first, then what arrived while it was read.
      pending.splice(1, 0, ...meanwhile);
      while (!signal?.aborted) {
        const next = pending.shift();
        if (!next) {
          const timer = this.clock.setTimeout(recheck, RECHECK_MS);
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          timer.cancel();
          continue;
        }
        yield next;
        if (next.type === 'status' && isFinished(next.execution.status)) return;
      }
    } finally {
      subscription.unsubscribe();
      workspaceFollow?.unsubscribe();
      outputFollow?.unsubscribe();
      relayed?.leave();
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private async requireExecution(accountId: string, workspaceId: string, trigger: string, executionId: string): Promise<ExecutionRecord> {
    await this.workspaces.require(accountId, workspaceId);
    const record = await this.executions.get(accountId, executionId);
    if (!record || record.workspace_id !== workspaceId || record.trigger !== trigger) {
      throw DomainError.notFound(`execution ${executionId.slice(0, 64)} of command '${trigger.slice(0, 64)}' in workspace ${workspaceId}`);
    }
    return record;
  }

  /** The view, with the output so far while it runs in this process. */
  private view(record: ExecutionRecord): CommandExecution {
    const output = isFinished(record.status) ? undefined : this.live.get(record.id);
    const view = toExecutionView(record);
    return output ? { ...view, output: output.text, output_truncated: output.truncated } : view;
  }

  private async newExecution(indexed: CommandIndexRecord, request: ReturnType<typeof executeCommandSchema.parse>): Promise<ExecutionRecord> {
    const { command } = indexed;
    const args = resolvedArgs(command, request.args);
    if (command.type === 'shell' && !this.config.shellCommands) throw shellCommandsDisabled();
    if (command.type === 'process' && !(await latestProcessRun(this.processRuns(), indexed.account_id, indexed.workspace_id, command.process_id!))) {
      throw noProcessSpec(indexed.workspace_id, command.process_id!);
    }
    const model = command.type === 'prompt' ? await this.modelFor(indexed, request.model) : null;
    return {
      id: this.ids.newId(),
      account_id: indexed.account_id,
      workspace_id: indexed.workspace_id,
      trigger: command.trigger,
      type: command.type,
      args,
      status: 'queued',
      output: '',
      output_truncated: false,
      exit_code: null,
      error: null,
      run_id: null,
      thread_id: request.threadId ?? null,
      tool_call_id: request.toolCallId ?? null,
      created_at: this.clock.now().toISOString(),
      started_at: null,
      completed_at: null,
      command,
      model,
    };
  }

  /** The request's model, else the command's, else the workspace configuration's `models.default`; else 400 naming what to set. */
  private async modelFor(indexed: CommandIndexRecord, requested: CommandModel | undefined): Promise<CommandModel> {
    const model = requested ?? indexed.command.model ?? (await this.workspaceConfigs.get(indexed.account_id, indexed.workspace_id)).models?.default;
    if (model) return model;
    throw DomainError.invalid(
      `command '${indexed.trigger}' names no model: give model {provider, model} in the execute body, set model on the command, or set models.default in the workspace config (PATCH /workspace/${indexed.workspace_id}/config)`,
      [{ path: 'model', message: 'no model given, none on the command, none as models.default in the workspace config' }],
    );
  }

  private async runJob(job: ExecutionJob, context: JobContext): Promise<void> {
    const record = await this.executions.get(job.account_id, job.execution_id);
    if (!record) throw new Error(`execution ${job.execution_id} is not in the store (yet)`);
    if (isFinished(record.status)) return;
    if (record.status === 'running' && record.type === 'shell') {
      return this.finishJob(record, interrupted('the server stopped while the shell command ran; it is not run again, since it may have done part of its work (run it again with execute)'), undefined, context);
    }
    if (context.attempt > MAX_ATTEMPTS) {
      return this.finishJob(record, interrupted(`the server stopped ${context.attempt - 1} times while the execution ran; it is not resumed again`), undefined, context);
    }
    const maxBytes = record.command.max_output_bytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    const output = this.live.open(record.id, maxBytes);
    const controller = new AbortController();
    this.running.set(record.id, controller);
    const served = this.relay.serve(record.workspace_id, outputKey(record.id), {
      items: (signal) => output.batches(signal),
      cancel: () => {
        this.cancel(record.account_id, record.workspace_id, record.trigger, record.id).catch((error: unknown) => {
          this.logger.warn({ executionId: record.id, error: (error as Error).message }, 'a cancel asked by another instance failed');
        });
      },
    });
    try {
      let current: ExecutionRecord = { ...record, status: 'running', started_at: record.started_at ?? this.clock.now().toISOString() };
      try {
        await this.executions.replace(current, { status: record.status });
      } catch (error) {
        if (error instanceof WriteConflictError) return; // cancelled meanwhile: the cancel wrote the outcome
        throw error;
      }
      await this.published(current);
      const signal = AbortSignal.any([controller.signal, context.signal]);
      const outcome = await this.runners.run({
        execution: current,
        output,
        signal,
        linkRun: async (runId) => {
          const linked = { ...current, run_id: runId };
          await this.executions.replace(linked, { status: 'running' });
          current = linked;
        },
      });
      await this.finishJob(current, outcome, output, context);
    } catch (error) {
      // The queue is stopping (the job is offered again) or the run was cancelled under it.
      if (context.signal.aborted || controller.signal.aborted) throw error;
      this.logger.error({ executionId: record.id, error: (error as Error).message }, 'a command execution failed on an unexpected error');
      const current = (await this.executions.get(record.account_id, record.id)) ?? record;
      await this.finishJob(current, { status: 'failed', error: { code: 'internal', message: 'the execution failed on an unexpected error' } }, output, context);
    } finally {
      this.running.delete(record.id);
      this.live.close(record.id);
      await served.close();
    }
  }

  /** Writes the outcome with the end of the job, unless a cancel wrote one first. */
  private async finishJob(record: ExecutionRecord, outcome: RunnerOutcome, output: LiveOutput | undefined, context: JobContext): Promise<void> {
    const final = this.finalRecord(record, outcome, output);
    try {
      await context.complete([this.executions.replaceOp(final, { status: record.status })]);
    } catch (error) {
      if (error instanceof WriteConflictError) return;
      throw error;
    }
    await this.ended(final);
  }

  private finalRecord(record: ExecutionRecord, outcome: RunnerOutcome, output: LiveOutput | undefined): ExecutionRecord {
    return {
      ...record,
      status: outcome.status,
      error: outcome.error ?? null,
      exit_code: outcome.exitCode ?? record.exit_code,
      output: output?.text ?? record.output,
      output_truncated: output?.truncated ?? record.output_truncated,
      completed_at: this.clock.now().toISOString(),
    };
  }

  /**
   * What follows a final status: the tool call's result in its thread, then the publication, so
   * whoever waits for the end finds the thread already answered.
   */
  private async ended(final: ExecutionRecord): Promise<void> {
    if (final.thread_id !== null) {
      try {
        await this.threads.change(final.account_id, final.workspace_id, final.thread_id, (thread) => withToolResult(thread, final));
      } catch (error) {
        // The thread was deleted (or broken) meanwhile: the execution's record still holds the result.
        this.logger.warn({ executionId: final.id, threadId: final.thread_id, error: (error as Error).message }, 'appending a command result to its thread failed');
      }
    }
    await this.published(final);
  }

  /** Publishes the execution's status on its topic and as `command.execution.updated` on the workspace's events. */
  private async published(record: ExecutionRecord): Promise<void> {
    const view = toExecutionView(record);
    try {
      await this.bus.publish(executionTopic(record.id), view);
      const { output: _output, ...summary } = view;
      await this.workspaceEvents.publish(record.workspace_id, { type: 'command.execution.updated', execution: summary });
    } catch (error) {
      this.logger.warn({ executionId: record.id, error: (error as Error).message }, 'publishing a command execution change failed');
    }
  }
}

function interrupted(message: string): RunnerOutcome {
  return { status: 'failed', error: { code: 'interrupted', message } satisfies ExecutionFailure };
}

/**
 * The args given positionally, checked against the declared ones: at most one per declared arg,
 * every required one given; a missing optional arg takes its default. NUL is refused (a program
 * cannot receive it).
 */
function resolvedArgs(command: CommandFile, given: readonly string[]): string[] {
  const declared = command.args;
  if (given.length > declared.length) {
    const names = declared.map((arg) => arg.name).join(', ');
    throw DomainError.invalid(`command '${command.trigger}' takes at most ${declared.length} args (${names || 'none declared'}), not ${given.length}`, [
      { path: 'args', message: `at most ${declared.length} args` },
    ]);
  }
  const missing = declared.filter((arg, index) => arg.required && given[index] === undefined).map((arg) => arg.name);
  if (missing.length > 0) {
    throw DomainError.invalid(`command '${command.trigger}' needs args ${missing.join(', ')} (positional, in declared order)`, [{ path: 'args', message: `missing ${missing.join(', ')}` }]);
  }
  const nul = given.findIndex((arg) => arg.includes('\0'));
  if (nul >= 0) throw DomainError.invalid(`args[${nul}] contains NUL`, [{ path: `args.${nul}`, message: 'must not contain NUL' }]);
  const args: string[] = [];
  for (const [index, arg] of declared.entries()) {
    const value = given[index] ?? arg.default;
    if (value === undefined) break;
    args.push(value);
  }
  return args;
}
