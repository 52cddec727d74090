import { hash } from 'node:crypto';
import type { Clock, Timer } from '../../ports/clock';
import { finishOrAbort, STOP_GRACE_MS } from '../../domain/stop-within';
import { type Database, type Doc, DuplicateIdError, type LivenessHold, type Migration, WriteConflictError, type WriteOp } from '../../ports/database';
import type { IdGenerator } from '../../ports/id-generator';
import type { EnqueueOptions, JobHandler, JobQueue, JobRetryPolicy } from '../../ports/job-queue';
import type { Logger } from '../../ports/logger';

export const JOBS_COLLECTION = 'jobs';

export const jobMigrations: Migration[] = [
  {
    id: 'jobs/001-create',
    steps: [
      {
        createCollection: JOBS_COLLECTION,
        fields: { kind: 'text', status: 'text', key: 'text', run_at: 'integer', lease_until: 'integer', attempt: 'integer' },
      },
    ],
  },
  {
    // A keyed job's id is made from its key, and attempt is only ever expected on a job found by id.
    id: 'jobs/002-unindex-key-attempt',
    steps: [
      { unindexField: { collection: JOBS_COLLECTION, field: 'key' } },
      { unindexField: { collection: JOBS_COLLECTION, field: 'attempt' } },
    ],
  },
];

/**
 * A stored job. Succeeded and cancelled jobs are deleted; failed ones stay for inspection.
 * `(status, attempt, lease_until)` is the version a claim checks: every claim raises `attempt`,
 * so exactly one worker wins each attempt.
 */
interface JobDoc extends Doc {
  kind: string;
  status: 'queued' | 'running' | 'failed';
  /** Idempotency key; while the job is queued or running, enqueueing the same key returns it. */
  key: string | null;
  payload: unknown;
  /** Attempts started so far (claims); the running attempt's number while `running`. */
  attempt: number;
  /** Epoch ms from which a queued job may run. */
  run_at: number;
  /** Epoch ms until which the running attempt's worker holds the job; then it is offered again. */
  lease_until: number | null;
  /** The running attempt's worker: its liveness holder in the store (`Database.holdLiveness`). */
  worker: string | null;
  retry: JobRetryPolicy;
  created_at: string;
  last_error: string | null;
}

export interface DatabaseJobQueueOptions {
  database: Database;
  clock: Clock;
  ids: IdGenerator;
  logger: Logger;
  /** How long a claim holds a job without renewal (renewed every third of it while running). */
  leaseMs?: number;
  /** How often to look for jobs that are due, enqueued by other instances, or abandoned. */
  pollIntervalMs?: number;
  /** Attempts of one kind running at once in this instance, unless `register` says otherwise. */
  defaultConcurrency?: number;
  /** How long `stop()` waits for running attempts before aborting them. */
  stopGraceMs?: number;
}

interface KindState {
  kind: string;
  handler: JobHandler<unknown>;
  concurrency: number;
  /** Attempts running here plus claims in flight. */
  busy: number;
  /** Known claimable jobs, oldest first: what this instance enqueued, retried or read from the store. */
  ready: JobDoc[];
  /** The store may hold due jobs that are not in `ready`. */
  storeMayHaveMore: boolean;
  refilling: boolean;
}

interface Attempt {
  /** The job as this worker last wrote it (status running, its attempt, current lease). */
  job: JobDoc;
  controller: AbortController;
  done: Promise<void>;
  /** Set when `stop` aborts it: a failure then hands the job back instead of retrying it. */
  stopping: boolean;
  /** Cancelled, or the lease was lost: the job is no longer this worker's to finish. */
  abandoned: boolean;
  finishing: boolean;
  /** The handler ended the attempt through `context.complete`: the job is gone. */
  completed: boolean;
}

const DEFAULT_RETRY: JobRetryPolicy = { maxAttempts: 1, initialBackoffMs: 1000 };
/** Jobs remembered per kind without reading the store; past that the store is read in batches. */
const MAX_READY_PER_KIND = 10_000;
const REFILL_BATCH = 100;
const MAX_ERROR_LENGTH = 1000;
/**
 * Running jobs read per look for dead workers, longest-held first; any beyond wait for the next
 * look (or their leases).
 */
const MAX_RUNNING_READ = 1000;

/**
 * The `JobQueue` on the `Database` port, so it runs on every store and instances sharing a
 * PostgreSQL database share the work. A job costs three writes: enqueue, claim, finish; an enqueue
 * that finds a free slot in this instance inserts the job already claimed, saving one, and starts
 * it once that insert is durable, or (`startBeforeDurable`) as soon as it has applied
 * (`WriteOptions.onApplied`); the enqueue and finish carry the caller's own writes (`with`, `context.complete`) at no extra write.
 *
 * Workers here are woken at once by enqueues and retries in this instance (timers for delayed
 * ones); the store is polled every `pollIntervalMs` for the rest, in two reads whatever the number
 * of kinds (`lookAtStore`).
 *
 * Worker liveness: while started, the queue holds a liveness hold in the store under its worker id
 * and tags the jobs it claims with it. At start and on every poll it takes back, at once, the
 * running jobs whose worker the store reports dead (a process killed, even with `kill -9`), so
 * they need not wait for their leases; a live worker's jobs are never taken. Leases stay as the
 * backstop for a worker the store cannot see die (a lost network), and for one stuck but alive.
 */
export class DatabaseJobQueue implements JobQueue {
  private readonly database: Database;
  private readonly clock: Clock;
  private readonly ids: IdGenerator;
  private readonly logger: Logger;
  private readonly leaseMs: number;
  private readonly pollIntervalMs: number;
  private readonly defaultConcurrency: number;
  private readonly stopGraceMs: number;
  /** The liveness holder this queue claims jobs as; a new one after a lost hold. */
  private workerId: string;
  /** Held while started; undefined while (re)acquiring it, when no job is claimed. */
  private hold: LivenessHold | undefined;
  private acquiringHold: Promise<void> | undefined;
  /** A poll's look at the store is under way (`lookAtStore`). */
  private looking = false;

  private readonly kinds = new Map<string, KindState>();
  private readonly attempts = new Map<string, Attempt>();
  private readonly claims = new Set<Promise<void>>();
  /** Ids in some kind's `ready` list or in `delayed`. */
  private readonly hinted = new Set<string>();
  /** Jobs of this instance that are due later, soonest first. */
  private delayed: JobDoc[] = [];
  private delayTimer: Timer | undefined;
  private pollTimer: Timer | undefined;
  private renewTimer: Timer | undefined;
  private started = false;

  constructor(options: DatabaseJobQueueOptions) {
    this.database = options.database;
    this.clock = options.clock;
    this.ids = options.ids;
    this.logger = options.logger;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.defaultConcurrency = options.defaultConcurrency ?? 10;
    this.stopGraceMs = options.stopGraceMs ?? STOP_GRACE_MS;
    this.workerId = this.ids.newId();
  }

  get running(): boolean {
    return this.started;
  }

  register<P>(kind: string, handler: JobHandler<P>, options: { concurrency?: number } = {}): void {
    if (this.kinds.has(kind)) throw new Error(`a handler for job kind ${kind} is already registered`);
    const concurrency = options.concurrency ?? this.defaultConcurrency;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`concurrency of ${kind} must be a whole number ≥ 1`);
    const state: KindState = { kind, handler: handler as JobHandler<unknown>, concurrency, busy: 0, ready: [], storeMayHaveMore: true, refilling: false };
    this.kinds.set(kind, state);
    this.pump(state);
  }

  async enqueue<P>(kind: string, payload: P, options: EnqueueOptions = {}): Promise<string> {
    const now = this.now();
    const job: JobDoc = {
      id: options.key === undefined ? this.ids.newId() : keyedJobId(kind, options.key),
      kind,
      status: 'queued',
      key: options.key ?? null,
      payload: payload === undefined ? null : JSON.parse(JSON.stringify(payload)),
      attempt: 0,
      run_at: options.runAt?.getTime() ?? now,
      lease_until: null,
      worker: null,
      retry: checkedRetryPolicy(options.retry ?? DEFAULT_RETRY),
      created_at: new Date(now).toISOString(),
      last_error: null,
    };
    // A free slot here and nothing waiting before it: insert the job claimed and run it at once.
    const state = this.kinds.get(kind);
    const runHere = this.started && this.hold !== undefined && state !== undefined && job.run_at <= now && state.ready.length === 0 && state.busy < state.concurrency;
    const stored = runHere ? this.claimed(job, now) : job;
    if (runHere) state.busy += 1;
    // Asked to, a job inserted claimed starts as soon as its insert has applied, while the insert
    // becomes durable: whatever the attempt writes is durable only along with it (the store keeps
    // write order), and the enqueue still resolves only once the job is durable.
    let executing = false;
    /** Starts the claimed job here unless this worker has stopped or lost its hold since; says whether it did. */
    const startHere = (): boolean => {
      if (!this.started || this.hold?.holder !== stored.worker) return false;
      executing = true;
      this.execute(stored, state!);
      return true;
    };
    let inserted: boolean;
    try {
      const ops = typeof options.with === 'function' ? options.with(runHere) : (options.with ?? []);
      inserted = await this.insert(stored, ops, runHere && options.startBeforeDurable ? startHere : undefined);
    } catch (error) {
      // A started attempt holds the slot until it ends (its writes fail along with this one).
      if (runHere && !executing) this.release(state);
      throw error;
    }
    if (!runHere) {
      if (inserted) this.offer(stored);
    } else if (!inserted) {
      this.release(state);
    } else if (!executing && !startHere()) {
      // Not started when the insert applied (a store wrapped without passing `onApplied` on), and
      // claimed as a worker that has lost its hold since: then the job is handed back.
      await this.handBack(stored, state);
    }
    return stored.id;
  }

  async cancel(jobId: string): Promise<void> {
    const attempt = this.attempts.get(jobId);
    if (attempt) {
      attempt.abandoned = true;
      attempt.controller.abort(new Error('job cancelled'));
    }
    this.forget(jobId);
    try {
      await this.database.write([{ op: 'delete', collection: JOBS_COLLECTION, id: jobId }]);
    } catch (error) {
      if (!(error instanceof WriteConflictError)) throw error;
    }
  }

  async start(): Promise<void> {
    if (this.started) return;
    await this.acquireHold();
    try {
      await this.takeBackFromDeadWorkers(await this.readRunning());
    } catch (error) {
      await this.releaseHold();
      throw error;
    }
    this.started = true;
    this.pollTimer = this.clock.setInterval(() => this.poll(), this.pollIntervalMs);
    this.renewTimer ??= this.clock.setInterval(() => this.renewLeases(), Math.max(1, Math.floor(this.leaseMs / 3)));
    this.scheduleDelayed();
    this.poll();
  }

  async stop(graceMs: number = this.stopGraceMs): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.pollTimer?.cancel();
    this.delayTimer?.cancel();
    // Claims in flight hand their jobs straight back (see `claim`); then wait for running attempts.
    await Promise.allSettled([...this.claims]);
    const running = () => [...this.attempts.values()].map((attempt) => attempt.done);
    await finishOrAbort(this.clock, running, graceMs, () => {
      for (const attempt of this.attempts.values()) {
        attempt.stopping = true;
        attempt.controller.abort(new Error('job queue stopping'));
      }
    });
    // An attempt still running now keeps no lease, and this worker is dead to the others: the job
    // is offered again.
    this.renewTimer?.cancel();
    this.renewTimer = undefined;
    await this.releaseHold();
    for (const state of this.kinds.values()) {
      state.ready = [];
      state.storeMayHaveMore = true;
    }
    this.delayed = [];
    this.hinted.clear();
  }

  depth(): Promise<number> {
    return this.database.count(JOBS_COLLECTION, { status: { in: ['queued', 'running'] } });
  }

  /**
   * Inserts a job (`onApplied` runs once the job is in the store, before it is durable). False
   * when its key is held by a queued or running job (same id: the key names it), which then
   * stands for this enqueue.
   */
  private async insert(job: JobDoc, ops: readonly WriteOp[], onApplied?: () => void): Promise<boolean> {
    for (;;) {
      try {
        await this.database.write([...ops, { op: 'insert', collection: JOBS_COLLECTION, doc: job }], { onApplied });
        return true;
      } catch (error) {
        if (!(error instanceof DuplicateIdError) || job.key === null || !isJob(error, job.id)) throw error;
      }
      const existing = (await this.database.get(JOBS_COLLECTION, job.id)) as JobDoc | undefined;
      if (existing === undefined) continue;
      if (existing.status !== 'failed') {
        if (ops.length > 0) await this.database.write(ops);
        return false;
      }
      // A failed job no longer holds its key: the new job takes its place.
      try {
        await this.database.write([...ops, { op: 'replace', collection: JOBS_COLLECTION, doc: job, expect: versionOf(existing) }], { onApplied });
        return true;
      } catch (error) {
        if (!(error instanceof WriteConflictError) || !isJob(error, job.id)) throw error;
      }
    }
  }

  /** Remembers a queued job so a worker here takes it without reading the store. */
  private offer(job: JobDoc): void {
    const state = this.kinds.get(job.kind);
    if (!state || this.hinted.has(job.id)) return;
    if (job.run_at > this.now()) {
      if (this.delayed.length >= MAX_READY_PER_KIND) return;
      this.hinted.add(job.id);
      const index = this.delayed.findIndex((other) => other.run_at > job.run_at);
      this.delayed.splice(index < 0 ? this.delayed.length : index, 0, job);
      this.scheduleDelayed();
      return;
    }
    this.keepReady(state, job);
    this.pump(state);
  }

  private forget(jobId: string): void {
    if (!this.hinted.delete(jobId)) return;
    this.delayed = this.delayed.filter((job) => job.id !== jobId);
    for (const state of this.kinds.values()) state.ready = state.ready.filter((job) => job.id !== jobId);
  }

  /** Starts claims while the kind has free slots and known jobs; reads the store when it may hold more. */
  private pump(state: KindState): void {
    if (!this.started || this.hold === undefined) return;
    while (state.busy < state.concurrency) {
      const job = state.ready.shift();
      if (!job) break;
      this.hinted.delete(job.id);
      if (this.attempts.has(job.id)) continue;
      state.busy += 1;
      const claim = this.claim(job, state);
      this.claims.add(claim);
      void claim.finally(() => this.claims.delete(claim));
    }
    if (state.busy < state.concurrency && state.ready.length === 0 && state.storeMayHaveMore && !state.refilling) {
      void this.refill(state);
    }
  }

  private async claim(job: JobDoc, state: KindState): Promise<void> {
    const claimed = this.claimed(job, this.now());
    try {
      await this.database.write([{ op: 'replace', collection: JOBS_COLLECTION, doc: claimed, expect: versionOf(job) }]);
    } catch (error) {
      // Another worker took it, or it was cancelled: nothing to do.
      if (!(error instanceof WriteConflictError)) this.logger.error({ jobId: job.id, kind: job.kind, error: errorMessage(error) }, 'job claim failed');
      this.release(state);
      return;
    }
    // Claimed as a worker that has since lost its hold (the others may take the job back): hand it back.
    if (this.started && this.hold?.holder === claimed.worker) this.execute(claimed, state);
    else await this.handBack(claimed, state);
  }

  /** Reads due jobs of a kind, and jobs whose worker lost its lease, into `ready`. */
  private async refill(state: KindState): Promise<void> {
    state.refilling = true;
    // Until a full batch of new jobs says otherwise, the next look at the store is the next poll.
    state.storeMayHaveMore = false;
    try {
      const now = this.now();
      const limit = Math.max(REFILL_BATCH, state.concurrency);
      const [due, abandoned] = await Promise.all([
        this.database.find(JOBS_COLLECTION, {
          where: { kind: state.kind, status: 'queued', run_at: { lte: now } },
          orderBy: [{ field: 'run_at' }],
          limit,
        }),
        this.database.find(JOBS_COLLECTION, {
          where: { kind: state.kind, status: 'running', lease_until: { lt: now } },
          orderBy: [{ field: 'lease_until' }],
          limit,
        }),
      ]);
      const before = state.ready.length;
      for (const job of [...abandoned, ...due] as JobDoc[]) this.remember(job);
      state.storeMayHaveMore = state.ready.length > before && (due.length === limit || abandoned.length === limit);
    } catch (error) {
      this.logger.error({ kind: state.kind, error: errorMessage(error) }, 'reading due jobs failed');
    } finally {
      state.refilling = false;
    }
    this.pump(state);
  }

  private execute(job: JobDoc, state: KindState): void {
    const attempt: Attempt = {
      job,
      controller: new AbortController(),
      done: Promise.resolve(),
      stopping: false,
      abandoned: false,
      finishing: false,
      completed: false,
    };
    this.attempts.set(job.id, attempt);
    attempt.done = this.runAttempt(attempt, state).finally(() => {
      this.attempts.delete(job.id);
      this.release(state);
    });
  }

  private async runAttempt(attempt: Attempt, state: KindState): Promise<void> {
    const { job } = attempt;
    let failure: { error: unknown } | undefined;
    try {
      const complete = (ops: readonly WriteOp[]): Promise<void> => this.completeAttempt(attempt, ops);
      await state.handler(job.payload, { jobId: job.id, attempt: job.attempt, signal: attempt.controller.signal, complete });
    } catch (error) {
      failure = { error };
    }
    attempt.finishing = true;
    if (attempt.completed) {
      if (failure) this.logger.error({ jobId: job.id, kind: job.kind, error: errorMessage(failure.error) }, 'job handler failed after completing its job');
      return;
    }
    if (attempt.abandoned) return;
    try {
      await this.finish(attempt, failure);
    } catch (error) {
      if (error instanceof WriteConflictError) {
        this.logger.warn({ jobId: job.id, kind: job.kind, attempt: job.attempt }, 'job lease lost before the attempt finished');
      } else {
        this.logger.error({ jobId: job.id, kind: job.kind, attempt: job.attempt, error: errorMessage(error) }, 'recording the job result failed');
      }
    }
  }

  /** `JobContext.complete`: the job's deletion and the handler's ops in one write. */
  private async completeAttempt(attempt: Attempt, ops: readonly WriteOp[]): Promise<void> {
    const { job } = attempt;
    if (attempt.completed || attempt.finishing) throw new Error(`job ${job.id} has already finished`);
    if (attempt.abandoned) throw new WriteConflictError(JOBS_COLLECTION, job.id);
    // No lease renewal while the job may be deleted under it (a renewal would then see a conflict).
    attempt.finishing = true;
    try {
      await this.database.write([...ops, { op: 'delete', collection: JOBS_COLLECTION, id: job.id, expect: { status: 'running', attempt: job.attempt } }]);
    } catch (error) {
      attempt.finishing = false;
      throw error;
    }
    attempt.completed = true;
  }

  private async finish(attempt: Attempt, failure: { error: unknown } | undefined): Promise<void> {
    const job = attempt.job;
    const expect = { status: 'running', attempt: job.attempt };
    if (!failure) {
      await this.database.write([{ op: 'delete', collection: JOBS_COLLECTION, id: job.id, expect }]);
      return;
    }
    const message = errorMessage(failure.error).slice(0, MAX_ERROR_LENGTH);
    const now = this.now();
    if (attempt.stopping) {
      await this.handBack(job);
      return;
    }
    if (job.attempt >= job.retry.maxAttempts) {
      const failed: JobDoc = { ...job, status: 'failed', lease_until: null, worker: null, last_error: message };
      await this.database.write([{ op: 'replace', collection: JOBS_COLLECTION, doc: failed, expect }]);
      this.logger.error({ jobId: job.id, kind: job.kind, attempt: job.attempt, error: message }, 'job failed');
      return;
    }
    const retry: JobDoc = { ...job, status: 'queued', run_at: now + retryDelayMs(job.retry, job.attempt), lease_until: null, worker: null, last_error: message };
    await this.database.write([{ op: 'replace', collection: JOBS_COLLECTION, doc: retry, expect }]);
    this.logger.warn({ jobId: job.id, kind: job.kind, attempt: job.attempt, error: message }, 'job attempt failed; retrying');
    this.offer(retry);
  }

  /**
   * Returns a job this worker holds to the queue, due now (when stopping). If that write fails the
   * lease still runs out and the job is offered again then.
   */
  private async handBack(job: JobDoc, state?: KindState): Promise<void> {
    const queued: JobDoc = { ...job, status: 'queued', run_at: this.now(), lease_until: null, worker: null };
    try {
      await this.database.write([{ op: 'replace', collection: JOBS_COLLECTION, doc: queued, expect: { status: 'running', attempt: job.attempt } }]);
    } catch (error) {
      this.logger.warn({ jobId: job.id, kind: job.kind, error: errorMessage(error) }, 'handing a job back failed; it is offered again when its lease runs out');
    } finally {
      if (state) this.release(state);
    }
  }

  private release(state: KindState): void {
    state.busy -= 1;
    this.pump(state);
  }

  private claimed(job: JobDoc, now: number): JobDoc {
    return { ...job, status: 'running', attempt: job.attempt + 1, lease_until: now + this.leaseMs, worker: this.workerId };
  }

  private renewLeases(): void {
    const now = this.now();
    for (const attempt of this.attempts.values()) {
      const { job } = attempt;
      if (attempt.finishing || attempt.abandoned || (job.lease_until ?? 0) - now > (this.leaseMs * 2) / 3) continue;
      const renewed: JobDoc = { ...job, lease_until: now + this.leaseMs };
      const op: WriteOp = { op: 'replace', collection: JOBS_COLLECTION, doc: renewed, expect: { status: 'running', attempt: job.attempt } };
      this.database.write([op]).then(
        () => {
          if (!attempt.finishing) attempt.job = renewed;
        },
        (error: unknown) => {
          if (attempt.finishing) return;
          if (!(error instanceof WriteConflictError)) {
            this.logger.error({ jobId: job.id, kind: job.kind, error: errorMessage(error) }, 'renewing a job lease failed');
            return;
          }
          // Cancelled, or taken over by another worker after the lease ran out: stop this attempt.
          this.logger.warn({ jobId: job.id, kind: job.kind, attempt: job.attempt }, 'job lease lost; aborting the attempt');
          attempt.abandoned = true;
          attempt.controller.abort(new Error('job lease lost'));
        },
      );
    }
  }

  private poll(): void {
    if (this.hold === undefined) {
      this.acquireHold().catch((error: unknown) => this.logger.error({ error: errorMessage(error) }, 'taking a liveness hold failed; retrying at the next poll'));
      return;
    }
    if (this.looking) return;
    this.looking = true;
    this.lookAtStore()
      .catch((error: unknown) => this.logger.error({ error: errorMessage(error) }, 'looking for due jobs and jobs of dead workers failed'))
      .finally(() => (this.looking = false));
  }

  /**
   * A poll's look at the store, two reads whatever the number of kinds: the running jobs (those of
   * dead workers are offered again, those whose lease ran out are claimable), and the due jobs of
   * every kind with a free slot. When the due jobs may not all have fit in that read, each of those
   * kinds reads its own (`refill`); a kind without a free slot reads when one frees.
   */
  private async lookAtStore(): Promise<void> {
    const running = await this.readRunning();
    await this.takeBackFromDeadWorkers(running);
    const now = this.now();
    const open: KindState[] = [];
    for (const state of this.kinds.values()) {
      if (state.busy < state.concurrency && !state.refilling) open.push(state);
      else state.storeMayHaveMore = true;
    }
    for (const job of running) if ((job.lease_until ?? 0) < now) this.remember(job);
    if (open.length > 0) {
      const due = (await this.database.find(JOBS_COLLECTION, {
        where: { kind: { in: open.map((state) => state.kind) }, status: 'queued', run_at: { lte: now } },
        orderBy: [{ field: 'run_at' }],
        limit: REFILL_BATCH,
      })) as JobDoc[];
      for (const job of due) this.remember(job);
      const mayHaveMore = due.length === REFILL_BATCH || running.length === MAX_RUNNING_READ;
      for (const state of open) state.storeMayHaveMore = mayHaveMore;
    }
    for (const state of this.kinds.values()) this.pump(state);
  }

  /** Adds a job read from the store to its kind's `ready`, unless it is known or running here. */
  private remember(job: JobDoc): void {
    const state = this.kinds.get(job.kind);
    if (!state || this.hinted.has(job.id) || this.attempts.has(job.id)) return;
    this.keepReady(state, job);
  }

  /** Queues a due job in its kind's `ready`, at most MAX_READY_PER_KIND of them: past it the store is read again later. */
  private keepReady(state: KindState, job: JobDoc): void {
    if (state.ready.length >= MAX_READY_PER_KIND) {
      state.storeMayHaveMore = true;
      return;
    }
    this.hinted.add(job.id);
    state.ready.push(job);
  }

  private scheduleDelayed(): void {
    this.delayTimer?.cancel();
    this.delayTimer = undefined;
    const next = this.delayed[0];
    if (!this.started || !next) return;
    this.delayTimer = this.clock.setTimeout(() => {
      const now = this.now();
      const due = this.delayed.filter((job) => job.run_at <= now);
      this.delayed = this.delayed.filter((job) => job.run_at > now);
      for (const job of due) {
        this.hinted.delete(job.id);
        this.offer(job);
      }
      this.scheduleDelayed();
    }, Math.max(0, next.run_at - this.now()));
  }

  /** Takes a liveness hold under a fresh worker id (one attempt at a time). */
  private acquireHold(): Promise<void> {
    this.acquiringHold ??= (async () => {
      const workerId = this.ids.newId();
      const hold = await this.database.holdLiveness(workerId, (error) => this.holdLost(hold, error));
      this.workerId = workerId;
      this.hold = hold;
    })().finally(() => (this.acquiringHold = undefined));
    return this.acquiringHold;
  }

  private async releaseHold(): Promise<void> {
    const hold = this.hold;
    this.hold = undefined;
    await hold?.release();
  }

  /**
   * The store no longer sees this worker live, so others may take its jobs back: stop every attempt
   * (without recording anything: the jobs are no longer this worker's) and claim nothing until a
   * new hold is taken at the next poll.
   */
  private holdLost(hold: LivenessHold, error: Error): void {
    if (this.hold !== hold) return;
    this.hold = undefined;
    this.logger.error({ worker: hold.holder, error: error.message }, 'job queue worker lost its liveness hold; aborting its attempts');
    for (const attempt of this.attempts.values()) {
      if (attempt.job.worker !== hold.holder) continue;
      attempt.abandoned = true;
      attempt.controller.abort(new Error('job queue worker lost its liveness hold'));
    }
  }

  /** Running jobs, longest-held lease first (expired leases, then the jobs a dead worker held longest). */
  private async readRunning(): Promise<JobDoc[]> {
    return (await this.database.find(JOBS_COLLECTION, {
      where: { status: 'running' },
      orderBy: [{ field: 'lease_until' }],
      limit: MAX_RUNNING_READ,
    })) as JobDoc[];
  }

  /**
   * Offers again at once the running jobs whose worker is dead. The jobs are read before the
   * liveness: a worker holds its liveness before it claims, so one seen dead after its job was
   * read has died (a worker starting meanwhile cannot hold a job that was read).
   */
  private async takeBackFromDeadWorkers(running: readonly JobDoc[]): Promise<void> {
    const others = running.filter((job) => job.worker !== null && job.worker !== this.workerId && !this.attempts.has(job.id));
    if (others.length === 0) return;
    const live = await this.database.liveHolders([...new Set(others.map((job) => job.worker!))]);
    const now = this.now();
    let takenBack = 0;
    for (const job of others) {
      if (live.has(job.worker!)) continue;
      const queued: JobDoc = { ...job, status: 'queued', run_at: now, lease_until: null, worker: null };
      try {
        await this.database.write([{ op: 'replace', collection: JOBS_COLLECTION, doc: queued, expect: versionOf(job) }]);
      } catch (error) {
        if (!(error instanceof WriteConflictError)) throw error;
        continue;
      }
      takenBack += 1;
      if (this.started) this.offer(queued);
    }
    if (takenBack > 0) this.logger.warn({ jobs: takenBack }, 'offering again jobs whose worker died');
  }

  private now(): number {
    return this.clock.now().getTime();
  }
}

/** The error is about the job `id` (not about a caller's own op in the same write). */
function isJob(error: DuplicateIdError | WriteConflictError, id: string): boolean {
  return error.collection === JOBS_COLLECTION && error.id === id;
}

/** The claim precondition: the job is still exactly as read. */
function versionOf(job: JobDoc): { status: string; attempt: number; lease_until: number | null } {
  return { status: job.status, attempt: job.attempt, lease_until: job.lease_until };
}

/**
 * A keyed job's id is derived from its kind and key, so the store's id uniqueness makes enqueue
 * idempotent, across instances too. Keys are scoped by kind.
 */
function keyedJobId(kind: string, key: string): string {
  // The one-shot hash: a Hash object per enqueue cost more than the digest.
  const hex = hash('sha256', JSON.stringify([kind, key]), 'hex');
  // Shaped as a UUID (version 8: custom) like every other job id.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function checkedRetryPolicy(policy: JobRetryPolicy): JobRetryPolicy {
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) throw new Error('retry.maxAttempts must be a whole number ≥ 1');
  if (!(policy.initialBackoffMs >= 0)) throw new Error('retry.initialBackoffMs must be ≥ 0');
  if (policy.maxBackoffMs !== undefined && !(policy.maxBackoffMs >= 0)) throw new Error('retry.maxBackoffMs must be ≥ 0');
  if (policy.jitter !== undefined && !(policy.jitter >= 0 && policy.jitter <= 1)) throw new Error('retry.jitter must be between 0 and 1');
  return { ...policy };
}

/** Delay after failed attempt `attempt`: initial · 2^(attempt−1), capped, then ± jitter. */
export function retryDelayMs(policy: JobRetryPolicy, attempt: number): number {
  const base = Math.min(policy.initialBackoffMs * 2 ** (attempt - 1), policy.maxBackoffMs ?? Number.POSITIVE_INFINITY);
  const jitter = policy.jitter ?? 0;
  return Math.max(0, Math.round(base * (1 + jitter * (2 * Math.random() - 1))));
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
