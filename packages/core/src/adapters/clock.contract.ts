import { strict as assert } from 'node:assert';
import type { Clock } from '../ports/clock';

/** A clock under test and how to let `ms` of its time pass (a real wait, or advancing a manual clock). */
export interface ClockUnderTest {
  clock: Clock;
  pass(ms: number): Promise<void>;
}

/** The behaviour every `Clock` adapter must have; each adapter's test file runs it. */
export function clockContract(name: string, create: () => ClockUnderTest): void {
  describe(`Clock contract: ${name}`, () => {
    it('answers a fresh, valid Date each call, so callers may keep or change it', () => {
      const { clock } = create();
      const first = clock.now();
      assert.ok(first instanceof Date && !Number.isNaN(first.getTime()));
      first.setTime(0);
      assert.notEqual(clock.now().getTime(), 0);
    });

    it('never goes backwards between calls', async () => {
      const { clock, pass } = create();
      let previous = clock.now().getTime();
      for (let index = 0; index < 1000; index += 1) {
        if (index % 250 === 0) await pass(1);
        const current = clock.now().getTime();
        assert.ok(current >= previous);
        previous = current;
      }
    });

    it('fires a timeout once, never early and never inside the call that set it', async () => {
      const { clock, pass } = create();
      const setAt = clock.now().getTime();
      const firedAt: number[] = [];
      const fired = new Promise<void>((resolve) => {
        clock.setTimeout(() => {
          firedAt.push(clock.now().getTime());
          resolve();
        }, 30);
      });
      assert.deepEqual(firedAt, []);
      await pass(30);
      await fired;
      await pass(60);
      assert.equal(firedAt.length, 1);
      assert.ok(firedAt[0]! - setAt >= 29, `fired after ${firedAt[0]! - setAt} ms`);
    });

    it('fires a timer due earlier first, whatever the order they were set in', async () => {
      const { clock, pass } = create();
      const order: string[] = [];
      const last = new Promise<void>((resolve) => clock.setTimeout(() => (order.push('late'), resolve()), 40));
      clock.setTimeout(() => order.push('early'), 5);
      await pass(40);
      await last;
      assert.deepEqual(order, ['early', 'late']);
    });

    it('counts a negative or non-finite delay as 0, still firing later, not at once', async () => {
      const { clock, pass } = create();
      const fired: number[] = [];
      for (const delay of [-5, Number.NaN, 0]) clock.setTimeout(() => fired.push(delay), delay);
      assert.deepEqual(fired, []);
      await pass(5);
      assert.equal(fired.length, 3);
    });

    it('does not call a cancelled timeout, and cancelling twice or after it fired is harmless', async () => {
      const { clock, pass } = create();
      let calls = 0;
      const timer = clock.setTimeout(() => (calls += 1), 10);
      timer.cancel();
      timer.cancel();
      const fired = clock.setTimeout(() => (calls += 10), 5);
      await pass(30);
      fired.cancel();
      assert.equal(calls, 10);
    });

    it('calls an interval every period, at least the period apart, until it cancels itself', async () => {
      const { clock, pass } = create();
      const ticks: number[] = [];
      const done = new Promise<void>((resolve) => {
        const interval = clock.setInterval(() => {
          ticks.push(clock.now().getTime());
          if (ticks.length === 3) {
            interval.cancel();
            resolve();
          }
        }, 10);
      });
      for (let index = 0; index < 3; index += 1) await pass(10);
      await done;
      await pass(40);
      assert.equal(ticks.length, 3);
      for (let index = 1; index < ticks.length; index += 1) assert.ok(ticks[index]! - ticks[index - 1]! >= 9, `ticks ${ticks.join(', ')}`);
    });

    it('sleeps for the delay, and stops sleeping with the reason of an abort', async () => {
      const { clock, pass } = create();
      const started = clock.now().getTime();
      const slept = clock.sleep(20);
      await pass(20);
      await slept;
      assert.ok(clock.now().getTime() - started >= 19);

      const controller = new AbortController();
      const aborted = clock.sleep(60_000, controller.signal);
      const reason = new Error('stop waiting');
      controller.abort(reason);
      await assert.rejects(aborted, (error) => error === reason);
      await assert.rejects(clock.sleep(10, AbortSignal.abort(reason)), (error) => error === reason);
    });

    it('takes delays longer than a host timer can (about 24.8 days) without firing early', async () => {
      const { clock, pass } = create();
      let fired = false;
      const timer = clock.setTimeout(() => (fired = true), 30 * 24 * 3600 * 1000);
      await pass(20);
      assert.equal(fired, false);
      timer.cancel();
    });
  });
}
