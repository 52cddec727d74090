import type { Clock, Timer } from '../ports/clock';

/** How long a stopping lifecycle lets its work finish before aborting it, unless told otherwise. */
export const STOP_GRACE_MS = 10_000;

/** How long a stopping lifecycle waits for the work it aborted to settle. */
const ABORT_SETTLE_MS = 1000;

/**
 * How a lifecycle stops the work it started: waits up to `graceMs` for `running()` to settle, then
 * calls `abort` and waits up to a second more for what it aborted. The job queue's attempts and the
 * run engine's runs started without a job stop this way.
 */
export async function finishOrAbort(clock: Clock, running: () => Promise<unknown>[], graceMs: number, abort: () => void): Promise<void> {
  if (await settledWithin(clock, running(), graceMs)) return;
  abort();
  await settledWithin(clock, running(), ABORT_SETTLE_MS);
}

/** Whether every promise settled (a rejection counts) within `ms` on the clock. */
async function settledWithin(clock: Clock, promises: Promise<unknown>[], ms: number): Promise<boolean> {
  if (promises.length === 0) return true;
  let timer: Timer | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = clock.setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([Promise.allSettled(promises).then(() => true as const), timedOut]);
  } finally {
    timer?.cancel();
  }
}
