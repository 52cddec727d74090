/**
 * Time and timers. Everything in the core that reads the time or waits goes through this port, so a
 * test can bind a controllable clock (`ManualClock`) and move time on by hand instead of sleeping.
 * The default (`SystemClock`) reads the system clock and uses the host's timers.
 *
 * Guarantees every adapter keeps (the contract suite `adapters/clock.contract.ts` checks them):
 * - `now()` answers a fresh `Date` that never goes backwards between calls of one clock;
 * - a timer never fires early (at least `ms` pass, within the 1 ms resolution of `now()`), fires
 *   once (a timeout) or every `ms` (an interval), never synchronously inside the call that set it;
 *   a timer due earlier fires earlier;
 * - `cancel()` may be called any number of times, and once it returns the callback is not called
 *   again (an interval cancelled from its own callback included);
 * - a negative or non-finite delay counts as 0; delays longer than the host's timers take (about
 *   24.8 days for Node) work.
 */
export const Clock = Symbol.for('runloom.Clock');
export interface Clock {
  now(): Date;
  /** Calls `callback` once, `ms` from now. */
  setTimeout(callback: () => void, ms: number): Timer;
  /** Calls `callback` every `ms` (at least 1) until cancelled. */
  setInterval(callback: () => void, ms: number): Timer;
  /**
   * Resolves `ms` from now; rejects with `signal.reason` as soon as `signal` aborts (at once if it
   * already has), and the timer is then cancelled.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** A timer set by a `Clock`. */
export interface Timer {
  cancel(): void;
}

/**
 * `Clock.sleep` on a clock's own `setTimeout`, as the guarantee above words it: adapters share it so
 * each keeps the same abort behaviour.
 */
export function sleepOn(clock: Pick<Clock, 'setTimeout'>, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      reject(signal!.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
