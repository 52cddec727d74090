import { type Clock, sleepOn, type Timer } from '../../ports/clock';

/** The longest delay Node's timers take (2^31 - 1 ms, about 24.8 days); longer ones are waited out in steps. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The system clock and the host's timers. Timers measure on the monotonic clock, so a step of the
 * wall clock (NTP) neither fires nor stalls them; one the host fires early (it counts from the
 * event loop's cached time) re-arms for what is left. They keep the process alive, as the host's
 * do: whoever sets one cancels it when stopping.
 */
export class SystemClock implements Clock {
  now(): Date {
    return new Date();
  }

  setTimeout(callback: () => void, ms: number): Timer {
    const due = performance.now() + delayOf(ms);
    let handle: NodeJS.Timeout | undefined;
    const arm = (remaining: number): void => {
      handle = setTimeout(() => {
        const left = due - performance.now();
        if (left > 0) arm(left);
        else callback();
      }, Math.min(remaining, MAX_TIMER_MS));
    };
    arm(delayOf(ms));
    return { cancel: () => clearTimeout(handle) };
  }

  setInterval(callback: () => void, ms: number): Timer {
    const every = Math.max(1, delayOf(ms));
    let current: Timer | undefined;
    const tick = (): void => {
      // Re-armed first, so a callback that cancels the interval cancels the next tick.
      current = this.setTimeout(tick, every);
      callback();
    };
    current = this.setTimeout(tick, every);
    return { cancel: () => current?.cancel() };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }
}

function delayOf(ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}
