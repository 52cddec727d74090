import { type Clock, sleepOn, type Timer } from '../ports/clock';

/** A timer a `ManualClock` holds until time reaches it. */
export interface PendingTimer {
  /** The clock's epoch ms at which it fires next. */
  readonly dueMs: number;
  /** The delay it was set with (an interval's period). */
  readonly delayMs: number;
  readonly interval: boolean;
}

interface Entry extends PendingTimer {
  dueMs: number;
  /** Which timer this is (an interval keeps its id from one firing to the next). */
  id: number;
  /** Scheduling order: timers due at the same time fire in it. */
  seq: number;
  callback: () => void;
}

interface TimerWaiter {
  matches: (timer: PendingTimer) => boolean;
  resolve: (timer: PendingTimer) => void;
}

/**
 * A `Clock` whose time moves only when a test says so, for tests that would otherwise sleep
 * (shaped like @sinonjs/fake-timers' `tickAsync`): `advance(ms)` fires the timers that fall due in
 * order, each at its own time, letting the work they start run between them. `timerSet` waits for
 * the code under test to set a timer (a retry's backoff, a run's timeout), so a test can assert the
 * delay and then advance exactly past it.
 *
 * Bind it with `rebind(Clock).toConstantValue(clock)` (`startTestRunloom({ clock })` does).
 * It starts at the system time by default, so tokens it stamps pass verifiers that read the system clock.
 */
export class ManualClock implements Clock {
  private nowMs: number;
  private seq = 0;
  private timers: Entry[] = [];
  private waiters: TimerWaiter[] = [];

  constructor(start: Date | number = Date.now()) {
    this.nowMs = typeof start === 'number' ? start : start.getTime();
  }

  now(): Date {
    return new Date(this.nowMs);
  }

  setTimeout(callback: () => void, ms: number): Timer {
    return this.add(callback, delayOf(ms), false);
  }

  setInterval(callback: () => void, ms: number): Timer {
    return this.add(callback, Math.max(1, delayOf(ms)), true);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Timers set and not yet fired (intervals until cancelled) nor cancelled, soonest first. */
  get pending(): PendingTimer[] {
    return this.timers.map(({ dueMs, delayMs, interval }) => ({ dueMs, delayMs, interval }));
  }

  /**
   * Moves time on by `ms`, firing every timer that falls due on the way (including ones those
   * timers set) in due order, with `now()` at each one's due time. Before each timer and at the
   * end it yields a turn of the event loop, so promise chains the callbacks start run on; work that
   * waits for I/O may still be going when it resolves: await its outcome.
   */
  async advance(ms: number): Promise<void> {
    const target = this.nowMs + delayOf(ms);
    await nextTurn();
    for (let next = this.timers[0]; next !== undefined && next.dueMs <= target; next = this.timers[0]) {
      this.nowMs = Math.max(this.nowMs, next.dueMs);
      this.timers.shift();
      if (next.interval) this.insert({ ...next, dueMs: next.dueMs + next.delayMs, seq: this.seq++ });
      next.callback();
      await nextTurn();
    }
    this.nowMs = target;
  }

  /**
   * Resolves with the first pending timer that `matches` (by default any timeout, not an interval),
   * at once if one is pending, else when the code under test sets it.
   */
  timerSet(matches: (timer: PendingTimer) => boolean = (timer) => !timer.interval): Promise<PendingTimer> {
    const found = this.pending.find(matches);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ matches, resolve }));
  }

  /**
   * Advances time in `stepMs` steps, a real event-loop turn apart, until `promise` settles, and
   * answers it: for work that waits on this clock and on I/O in turn (a shutdown's grace period).
   */
  async advanceUntil<T>(promise: Promise<T>, stepMs = 100): Promise<T> {
    let settled = false;
    const watched = promise.finally(() => {
      settled = true;
    });
    watched.catch(() => undefined);
    while (!settled) {
      await this.advance(stepMs);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    return watched;
  }

  private add(callback: () => void, delayMs: number, interval: boolean): Timer {
    const entry: Entry = { dueMs: this.nowMs + delayMs, delayMs, interval, id: this.seq, seq: this.seq++, callback };
    this.insert(entry);
    const view: PendingTimer = { dueMs: entry.dueMs, delayMs, interval };
    for (const waiter of this.waiters.filter((candidate) => candidate.matches(view))) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(view);
    }
    return {
      cancel: () => {
        this.timers = this.timers.filter((timer) => timer.id !== entry.id);
      },
    };
  }

  private insert(entry: Entry): void {
    const index = this.timers.findIndex((timer) => timer.dueMs > entry.dueMs || (timer.dueMs === entry.dueMs && timer.seq > entry.seq));
    this.timers.splice(index < 0 ? this.timers.length : index, 0, entry);
  }
}

function delayOf(ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/** One macrotask turn: pending promise callbacks and already-queued immediates run first. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
