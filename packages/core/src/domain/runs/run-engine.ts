import { inject, injectable } from 'inversify';
import { RunloomConfig } from '../../config';
import { Clock, type Timer } from '../../ports/clock';
import { finishOrAbort, STOP_GRACE_MS } from '../stop-within';
import { Database, WriteConflictError, type WriteOp } from '../../ports/database';
import { EventBus } from '../../ports/event-bus';
import { type EnqueueOptions, type JobContext, JobQueue, type JobRetryPolicy } from '../../ports/job-queue';
import { Logger } from '../../ports/logger';
import type { Lifecycle } from '../lifecycle';
import { Metrics } from '../../ports/metrics';
import type { KeptProviderConfig } from '../providers/provider-service';
import { CallbackDispatcher } from '../webhooks/callback-dispatcher';
import { RunScheduler, type SlotOutcome, type WakeUp } from './run-scheduler';
import { RunExecutor } from './executors/run-executor';
import { describeFailure, isUnexpectedFailure, RunCancelled, RunTimedOut } from './run-failure';
import { ACTIVE_RUN_STATUSES, isFinished, RUN_STATUSES, type RunRecord, type RunStatus, toRunView, type RunView } from './run-record';
import { RUNS_COLLECTION, RunRepository } from './run-repository';
import { NO_TELEMETRY, RecordingTelemetry } from './run-telemetry';

export const RUN_JOB = 'run.execute';

/** The job of a run; its key is the run id, so a run has at most one job at a time. */
interface RunJob {
  account_id: string;
  run_id: string;
  /** Attempts the run had before this job: 1 for a run started without a job (see `accept`) and found running. */
  attempts_before?: number;
}

/** A run `accept` stored as running, with the provider configuration its acceptance checked (if any). */
interface StartedAtAccept {
  run: RunRecord;
  provider: KeptProviderConfig | undefined;
}

/** What an execution needs of its job: its attempt, the signal that stops it, the write that ends it. */
type ExecutionContext = Pick<JobContext, 'attempt' | 'signal' | 'complete'>;

/**
 * Attempts a run gets: the first, plus resumptions after the server died or stopped while it ran.
 * A run interrupted more often is failed (`interrupted`) rather than tried forever.
 */
export const MAX_RUN_ATTEMPTS = 3;

/** Retries of a handler that threw: the store failed while writing the outcome, or the run was not visible yet. */
const RUN_JOB_RETRY: JobRetryPolicy = { maxAttempts: MAX_RUN_ATTEMPTS, initialBackoffMs: 500, maxBackoffMs: 5000, jitter: 0.2 };

/**
 * How often active runs without a job get one: runs parked by an instance that died, runs whose
 * job could not be written, runs started without a job that did not finish. At start too.
 */
const REPAIR_INTERVAL_MS = 60_000;

/** The topic a run's final view is published on when it finishes (sync submissions wait for it). */
export function runTopic(runId: string): string {
  return `run:${runId}`;
}

type FinalFields = Pick<RunRecord, 'status' | 'error'> & Partial<Pick<RunRecord, 'outputs' | 'usage' | 'trace'>>;

/**
 * Executes runs through the durable `JobQueue` (job `run.execute`, key = run id). Who runs when is
 * the `RunScheduler`'s: up to `runConcurrency` runs in flight in this process (a run waiting on a
 * vendor included) and `runConcurrencyPerAccount` per account, shared fairly between accounts
 * (ARCHITECTURE.md, "Run scheduling"). Every
 * transition is a conditional write, so a cancel racing a completion ends in exactly one final
 * state; whoever wins publishes the run on `run:<id>` and schedules its callback.
 *
 * Crash safety: a run's job exists until the run's outcome and its callback schedule are written
 * (a run without a callback writes its outcome and ends its job in one write), and queued or running runs without a job get one at start (and every minute). After `kill -9`,
 * the queue offers the dead process's jobs again at once; a run is resumed from the start (a model
 * call is redone) unless it has used its attempts, then it fails with `interrupted`. Either way it
 * ends, and its callback goes out.
 *
 * On a store no other process opens (`Database.shared` false: sql.js, memory), a run without a
 * callback that finds a slot free at submission has no job at all: stored `running`, it is what
 * the repair finds after a crash, and only this process could run it. Its outcome is its last
 * write, so nothing is left for a job to retry.
 */
@injectable()
export class RunEngine implements Lifecycle {
  readonly name = 'runs';
  private readonly slots: RunScheduler;
  /** Runs in flight, or waiting for a slot, in this process: to abort on cancel. */
  private readonly executing = new Map<string, AbortController>();
  /** Runs `accept` stored as running with a slot taken, until their job's handler takes them. */
  private readonly startedAtAccept = new Map<string, StartedAtAccept>();
  /** Executions of runs started without a job (see `accept`) until they settle, with their controllers. */
  private readonly withoutJob = new Map<Promise<void>, AbortController>();
  /** What a run started without a job has for its job's signal: aborted when `stop` has waited long enough. */
  private readonly stopping = new AbortController();
  private stopped = false;
  private repairTimer: Timer | undefined;

  constructor(
    @inject(RunRepository) private readonly runs: RunRepository,
    @inject(Database) private readonly database: Database,
    @inject(JobQueue) private readonly queue: JobQueue,
    @inject(EventBus) private readonly events: EventBus,
    @inject(RunExecutor) private readonly executor: RunExecutor,
    @inject(CallbackDispatcher) private readonly callbacks: CallbackDispatcher,
    @inject(Metrics) private readonly metrics: Metrics,
    @inject(Clock) private readonly clock: Clock,
    @inject(Logger) private readonly logger: Logger,
    @inject(RunloomConfig) private readonly config: RunloomConfig,
  ) {
    this.slots = new RunScheduler({ maxInFlight: config.runConcurrency, maxInFlightPerAccount: config.runConcurrencyPerAccount });
  }

  async start(): Promise<void> {
    // Runs in flight plus as many waiting for a slot hold jobs; the scheduler, not the queue, says who runs.
    const concurrency = this.config.runConcurrency * 2;
    this.queue.register<RunJob>(RUN_JOB, (job, context) => this.execute(job, context), { concurrency });
    this.metrics.gauge('runloom_runs', 'Runs by status', async () =>
      Promise.all(RUN_STATUSES.map(async (status) => ({ labels: { status }, value: await this.database.count(RUNS_COLLECTION, { status }) }))),
    );
    // A run started without a job (see `accept`) is work in flight all the same.
    this.metrics.gauge('runloom_job_queue_depth', 'Jobs waiting or running (runs, callbacks, …), runs executing without a job included', async () => [
      { labels: {}, value: (await this.queue.depth()) + this.withoutJob.size },
    ]);
    await this.repair();
    this.repairTimer = this.clock.setInterval(() => {
      this.repair().catch((error: unknown) => this.logger.error({ error: messageOf(error) }, 'queueing runs without a job failed'));
    }, REPAIR_INTERVAL_MS);
  }

  /**
   * Stops starting runs without a job, lets those running finish within STOP_GRACE_MS (as the queue
   * lets its attempts), then aborts them: they stay `running` in the store, and the next start's
   * repair resumes them.
   */
  async stop(): Promise<void> {
    this.repairTimer?.cancel();
    this.stopped = true;
    await finishOrAbort(this.clock, () => [...this.withoutJob.keys()], STOP_GRACE_MS, () => {
      this.stopping.abort(new Error('the server is stopping'));
      // Each aborted with the same reason, so the execution sees itself stopped (`stoppedByQueue`).
      for (const controller of this.withoutJob.values()) controller.abort(this.stopping.signal.reason);
    });
  }

  /**
   * Stores a new run and its job in one write: a run is accepted with its job, or not at all. When
   * this instance claims the job in that write and a slot is free, the run is stored already
   * `running`, so starting it costs no write of its own, and it is handed to its execution without
   * being read back. A run started without a job (see the class comment) is that write without the job.
   * `checks` (`check` ops) go into that write: the run is accepted only while they hold. A run
   * started in that write also carries `provider`'s check, and its model call uses that
   * configuration without reading it again; a run started later reads the store then.
   */
  async accept(run: RunRecord, checks: readonly WriteOp[] = [], provider?: KeptProviderConfig): Promise<void> {
    if (!this.database.shared && run.callback === null && !this.stopped && this.slots.tryAcquire(run.account_id)) {
      await this.acceptWithoutJob({ ...run, status: 'running', started_at: this.clock.now().toISOString() }, checks);
      return;
    }
    const ops = (claimedHere: boolean): WriteOp[] => {
      if (!claimedHere || !this.slots.tryAcquire(run.account_id)) return [...checks, this.runs.insertOp(run)];
      const started: RunRecord = { ...run, status: 'running', started_at: this.clock.now().toISOString() };
      this.startedAtAccept.set(run.id, { run: started, provider });
      return [...checks, ...(provider ? [provider.check] : []), this.runs.insertOp(started)];
    };
    try {
      await this.enqueue(run.account_id, run.id, ops);
    } finally {
      // Not taken by its handler (the write failed, or the queue handed the job back): the slot
      // goes back, and whoever claims the job later resumes the run from the store.
      if (this.startedAtAccept.delete(run.id)) this.wake(this.slots.release(run.account_id));
    }
  }

  /**
   * Stores the run, started, and executes it as soon as the write has applied, while it becomes
   * durable (as `enqueue` with `startBeforeDurable`: nobody hears of the run before this resolves).
   * Its slot is taken; the execution gives it back, or this when the write never applied.
   */
  private async acceptWithoutJob(run: RunRecord, checks: readonly WriteOp[]): Promise<void> {
    let executing = false;
    try {
      await this.database.write([...checks, this.runs.insertOp(run)], {
        onApplied: () => {
          executing = true;
          this.executeWithoutJob(run);
        },
      });
    } finally {
      if (!executing) this.wake(this.slots.release(run.account_id));
    }
  }

  /** Executes a run started without a job; it stops with `stop`, and its outcome is an ordinary write. */
  private executeWithoutJob(run: RunRecord): void {
    // Aborted by `stop` directly: a listener per run on the one stopping signal would pile up.
    const controller = new AbortController();
    this.executing.set(run.id, controller);
    const context: ExecutionContext = { attempt: 1, signal: this.stopping.signal, complete: (ops) => this.database.write(ops) };
    const execution = this.executeInSlot(run, controller, context)
      .catch((error: unknown) => {
        // Stopping, or the store failed: the run stays as stored and the repair gives it a job.
        if (!stoppedByQueue(controller, context)) this.logger.error({ runId: run.id, error: messageOf(error) }, 'a run started without a job did not finish; the repair resumes it');
      })
      .finally(() => {
        this.wake(this.slots.release(run.account_id));
        this.executing.delete(run.id);
        this.withoutJob.delete(execution);
      });
    this.withoutJob.set(execution, controller);
  }

  /**
   * Queues the run's job; a job the run already has stands. A run started here starts while its
   * write becomes durable: nobody hears of it before `enqueue` resolves (a sync run is answered
   * once its outcome is durable, which its acceptance is before).
   */
  private async enqueue(accountId: string, runId: string, ops?: EnqueueOptions['with'], attemptsBefore = 0): Promise<void> {
    const job: RunJob = { account_id: accountId, run_id: runId, ...(attemptsBefore > 0 ? { attempts_before: attemptsBefore } : {}) };
    await this.queue.enqueue<RunJob>(RUN_JOB, job, { key: runId, retry: RUN_JOB_RETRY, with: ops, startBeforeDurable: true });
  }

  /** Aborts the run's execution in this process, if it executes here. */
  abort(runId: string): void {
    this.executing.get(runId)?.abort(new RunCancelled());
  }

  /**
   * Writes the run's final status if it is still `expected` (through `commit`, which may add the
   * end of the run's job to the write), then publishes it. Undefined when another writer changed
   * the run first (it then owns the outcome).
   */
  async complete(
    run: RunRecord,
    fields: FinalFields,
    expected: RunStatus,
    commit: (ops: readonly WriteOp[]) => Promise<void> = (ops) => this.database.write(ops),
  ): Promise<RunRecord | undefined> {
    const final: RunRecord = { ...run, ...fields, completed_at: this.clock.now().toISOString() };
    try {
      await commit([this.runs.replaceOp(final, { status: expected })]);
    } catch (error) {
      if (error instanceof WriteConflictError && error.collection === RUNS_COLLECTION) return undefined;
      throw error;
    }
    this.metrics.increment('runloom_runs_finished_total', 'Runs that reached a final status', { status: final.status });
    this.events.publish<RunView>(runTopic(final.id), toRunView(final)).catch((error: unknown) => {
      this.logger.warn({ runId: final.id, error: messageOf(error) }, 'publishing a finished run failed');
    });
    return final;
  }

  /** Schedules a finished run's callback (idempotent); a failure is logged, and the run's job or the repair retries it. */
  async scheduleCallback(run: RunRecord): Promise<void> {
    try {
      await this.callbacks.schedule(run);
    } catch (error) {
      this.logger.error({ runId: run.id, error: messageOf(error) }, 'scheduling a run callback failed');
    }
  }

  /**
   * Gives every queued or running run without a job one, but those executing here. A running run
   * without a job was started without one (or its job failed for good): one attempt is counted.
   */
  private async repair(): Promise<void> {
    const active = (await this.database.find(RUNS_COLLECTION, {
      where: { status: { in: [...ACTIVE_RUN_STATUSES] } },
      orderBy: [{ field: 'created_at' }],
    })) as RunRecord[];
    for (const run of active) {
      if (this.executing.has(run.id)) continue;
      await this.enqueue(run.account_id, run.id, undefined, run.status === 'running' ? 1 : 0);
    }
  }

  private async execute(job: RunJob, context: JobContext): Promise<void> {
    // Taken before any await: `accept` gives the slot back when its enqueue returns and no handler took the run.
    const started = this.startedAtAccept.get(job.run_id);
    this.startedAtAccept.delete(job.run_id);
    const run = started?.run ?? (await this.runs.get(job.account_id, job.run_id));
    if (!run) throw new Error(`run ${job.run_id} is not in the store (yet)`);
    if (isFinished(run.status)) {
      // Finished before this job ended (a crash after the outcome, a cancel): make sure of the callback.
      this.wake(this.slots.forfeit(run.account_id, run.id));
      await this.callbacks.schedule(run);
      return;
    }
    const attempt = context.attempt + (job.attempts_before ?? 0);
    if (attempt > MAX_RUN_ATTEMPTS) {
      this.wake(this.slots.forfeit(run.account_id, run.id));
      const interrupted = {
        code: 'interrupted',
        message: `the run was interrupted ${attempt - 1} times (the server stopped while it ran) and is not resumed again`,
      };
      await this.finishWith(run, { status: 'failed', error: interrupted }, run.status, context);
      return;
    }
    // Aborted by the run (a cancel, its timeout) with that reason, or when the job's signal aborts
    // (the queue stops or lost the job) with the job's reason.
    const controller = new AbortController();
    const unfollow = follow(context.signal, controller);
    this.executing.set(run.id, controller);
    try {
      if (!started && !(await this.takeSlot(run, controller, context))) return;
      try {
        await this.executeInSlot(run, controller, context, started?.provider);
      } finally {
        this.wake(this.slots.release(run.account_id));
      }
    } finally {
      this.executing.delete(run.id);
      unfollow();
    }
  }

  /** Waits for a slot; false when the run does not execute now (parked, or cancelled while waiting). */
  private async takeSlot(run: RunRecord, controller: AbortController, context: JobContext): Promise<boolean> {
    let slot: SlotOutcome;
    try {
      slot = await this.slots.acquire(run.account_id, run.id, controller.signal);
    } catch (error) {
      // The queue is stopping: the job is handed back and the run stays queued.
      if (stoppedByQueue(controller, context)) throw error;
      // Cancelled while waiting for a slot: the cancel wrote the outcome.
      await this.settleLost(run);
      return false;
    }
    if (slot === 'full') {
      // Give the job up so the server's slots go to other accounts' runs; a freed slot wakes this run.
      await this.queue.cancel(context.jobId);
      this.wake(this.slots.park(run.account_id, run.id));
      return false;
    }
    return true;
  }

  private async executeInSlot(queuedOrRunning: RunRecord, controller: AbortController, context: ExecutionContext, provider?: KeptProviderConfig): Promise<void> {
    // Stored as running already: resumed after a restart, or started by `accept`.
    const storedRunning = queuedOrRunning.status === 'running';
    const run: RunRecord = storedRunning ? queuedOrRunning : { ...queuedOrRunning, status: 'running', started_at: this.clock.now().toISOString() };
    // The running status is written while the work starts (its commit overlaps the model call);
    // the outcome is written only once it has landed.
    const marked = storedRunning ? Promise.resolve(true) : this.markRunning(run, controller);
    marked.catch(() => {});
    let timer: Timer | undefined;
    try {
      if (run.timeout_seconds !== null && run.timeout_seconds >= 1) {
        const seconds = run.timeout_seconds;
        // Counted from the start, across a resumption too.
        const remainingMs = Date.parse(run.started_at!) + seconds * 1000 - this.clock.now().getTime();
        if (remainingMs <= 0) controller.abort(new RunTimedOut(seconds));
        else timer = this.clock.setTimeout(() => controller.abort(new RunTimedOut(seconds)), remainingMs);
      }
      const telemetry = run.telemetry_enabled ? new RecordingTelemetry(this.clock, run) : undefined;
      const usage = { input_tokens: 0, output_tokens: 0 };
      let fields: FinalFields;
      try {
        const outcome = await this.executor.execute(run, controller.signal, telemetry?.root ?? NO_TELEMETRY, usage, provider);
        fields = { status: 'succeeded', outputs: outcome.outputs, error: null };
      } catch (error) {
        // The queue is stopping or lost this job: the run stays as stored and is resumed.
        if (stoppedByQueue(controller, context)) throw error;
        fields = this.failure(run, error, controller.signal);
      }
      if (!(await marked)) {
        await this.settleLost(run);
        return;
      }
      fields.usage = usage;
      fields.trace = telemetry?.finish(fields.status, fields.error) ?? null;
      await this.finishWith(run, fields, 'running', context);
    } finally {
      timer?.cancel();
    }
  }

  /**
   * Stores the run as running. False when a cancel changed it first; any failure aborts the
   * execution, and a store failure is thrown (the job is retried).
   */
  private async markRunning(run: RunRecord, controller: AbortController): Promise<boolean> {
    try {
      await this.runs.replace(run, { status: 'queued' });
      return true;
    } catch (error) {
      const conflict = error instanceof WriteConflictError;
      controller.abort(conflict ? new RunCancelled() : error);
      if (conflict) return false;
      throw error;
    }
  }

  /**
   * Completes the run and schedules its callback; when another writer won, makes sure of theirs.
   * A run without a callback to schedule ends its job in the same write as its outcome.
   */
  private async finishWith(run: RunRecord, fields: FinalFields, expected: RunStatus, context: ExecutionContext): Promise<void> {
    const callbackDue = run.callback?.status === 'pending';
    const final = await this.complete(run, fields, expected, callbackDue ? undefined : (ops) => context.complete(ops));
    if (final) await this.callbacks.schedule(final);
    else await this.settleLost(run);
  }

  /** The run changed under this job (a cancel): if it has finished, its callback is due. */
  private async settleLost(run: RunRecord): Promise<void> {
    const current = await this.runs.get(run.account_id, run.id);
    if (current && isFinished(current.status)) await this.callbacks.schedule(current);
  }

  private failure(run: RunRecord, error: unknown, signal: AbortSignal): FinalFields {
    const reason: unknown = signal.aborted ? signal.reason : undefined;
    if (reason instanceof RunCancelled) return { status: 'cancelled', error: describeFailure(reason) };
    if (reason instanceof RunTimedOut) return { status: 'timed_out', error: describeFailure(reason) };
    if (isUnexpectedFailure(error)) {
      this.logger.error({ runId: run.id, accountId: run.account_id, error: messageOf(error), stack: (error as Error)?.stack }, 'run failed on an unexpected error');
    }
    return { status: 'failed', error: describeFailure(error) };
  }

  /** Queues the jobs of parked runs whose turn has come; if that fails, a run's kept slot goes to the next one. */
  private wake(runs: readonly WakeUp[]): void {
    for (const { accountId, runId } of runs) {
      this.enqueue(accountId, runId).catch((error: unknown) => {
        this.logger.warn({ runId, error: messageOf(error) }, 'waking a parked run failed; the periodic repair queues it');
        this.wake(this.slots.forfeit(accountId, runId));
      });
    }
  }
}

/** Aborts `controller` with `signal`'s reason when `signal` aborts; answers the unsubscribe. (`AbortSignal.any` costs more per run, and holds its signals until a GC.) */
function follow(signal: AbortSignal, controller: AbortController): () => void {
  const onAbort = (): void => controller.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/** The run's execution was aborted by its job's signal (the queue stopping, a lost job; for a run without a job, `stop`) before the run itself aborted it. */
function stoppedByQueue(controller: AbortController, context: Pick<JobContext, 'signal'>): boolean {
  return context.signal.aborted && controller.signal.reason === context.signal.reason;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
