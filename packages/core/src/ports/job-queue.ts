import type { WriteOp } from './database';

/**
 * Durable background work (runs, callback deliveries, process tasks, command executions).
 *
 * Guarantees: a job survives a crash once its `enqueue` has resolved (with `startBeforeDurable` its
 * handler may start before that; whatever the handler writes is durable only along with the job);
 * exactly one worker runs an attempt at a time; a job whose worker died (crash, lost lease) is
 * offered again; a handler that throws is retried per the job's `retry` policy, then the job is
 * marked failed. `key` makes enqueue idempotent.
 */
export const JobQueue = Symbol.for('runloom.JobQueue');

export interface JobRetryPolicy {
  maxAttempts: number;
  /** Delay before the second attempt; doubles each time, capped by `maxBackoffMs`. */
  initialBackoffMs: number;
  maxBackoffMs?: number;
  /** ± fraction of random jitter on each delay, e.g. 0.2. */
  jitter?: number;
}

export interface EnqueueOptions {
  /** Idempotency key: a second enqueue with the same key returns the first job's id. */
  key?: string;
  runAt?: Date;
  retry?: JobRetryPolicy;
  /**
   * Writes stored in the same atomic write as the job (both or neither), e.g. the record the job
   * works on. When `key` is held by a queued or running job, they are written on their own.
   *
   * As a function, it is called once, synchronously, just before the write, with whether the job
   * is stored already claimed by this instance, its handler to be called as soon as the write lands
   * (unless the queue stops or loses its hold meanwhile): so the record can be written as already
   * started, in the same write, instead of in a second one.
   */
  with?: readonly WriteOp[] | ((claimedHere: boolean) => readonly WriteOp[]);
  /**
   * A job stored claimed here (see `with`) starts as soon as its write has applied, while the write
   * becomes durable, instead of once it is: for a caller that tells nobody about the job before
   * `enqueue` resolves (the handler may then run, even finish, first). If the process dies before
   * `enqueue` resolves, the job may be gone, and everything its handler wrote with it.
   */
  startBeforeDurable?: boolean;
}

export interface JobContext {
  jobId: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** Aborted when the queue stops or the job is cancelled. */
  signal: AbortSignal;
  /**
   * Ends the attempt as succeeded in one atomic write with `ops` (the handler's outcome), so a
   * crash cannot keep the outcome and lose the job's end, or the reverse. Resolves once durable;
   * then the handler should return (what it does next is not retried). Rejects with the write's
   * error (a `WriteConflictError` from an `expect` of `ops`, or on the job when its lease was lost
   * or it was cancelled) and writes nothing: the attempt goes on and ends as the handler does.
   */
  complete(ops: readonly WriteOp[]): Promise<void>;
}

export type JobHandler<P = unknown> = (payload: P, context: JobContext) => Promise<void>;

export interface JobQueue {
  /** Registers the handler of a job kind; jobs of a kind without a handler wait. */
  register<P>(kind: string, handler: JobHandler<P>, options?: { concurrency?: number }): void;
  enqueue<P>(kind: string, payload: P, options?: EnqueueOptions): Promise<string>;
  /** Aborts the running attempt of a job (if here) and drops it from the queue. */
  cancel(jobId: string): Promise<void>;
  start(): Promise<void>;
  /** Stops taking jobs and waits for running attempts (aborting them after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
  /** Jobs waiting or running, for /metrics and /readyz. */
  depth(): Promise<number>;
  readonly running: boolean;
}
