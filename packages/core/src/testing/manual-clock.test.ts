import assert from 'node:assert/strict';
import { clockContract } from '../adapters/clock.contract';
import { ManualClock } from './manual-clock';

clockContract('ManualClock', () => {
  const clock = new ManualClock();
  return { clock, pass: (ms) => clock.advance(ms) };
});

describe('ManualClock', () => {
  it('stands still until advanced, starting where it is told', async () => {
    const clock = new ManualClock(new Date('2030-01-01T00:00:00Z'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(clock.now().toISOString(), '2030-01-01T00:00:00.000Z');
    await clock.advance(1500);
    assert.equal(clock.now().toISOString(), '2030-01-01T00:00:01.500Z');
  });

  it('fires each timer at its own due time, in due then set order, with the work it starts run in between', async () => {
    const clock = new ManualClock(0);
    const seen: string[] = [];
    clock.setTimeout(() => seen.push(`b@${clock.now().getTime()}`), 20);
    clock.setTimeout(() => {
      seen.push(`a@${clock.now().getTime()}`);
      // Work a timer starts (a promise chain, a timer it sets within the window) happens before the next timer.
      void Promise.resolve().then(() => seen.push('a-then'));
      clock.setTimeout(() => seen.push(`a-child@${clock.now().getTime()}`), 5);
    }, 10);
    clock.setTimeout(() => seen.push(`c@${clock.now().getTime()}`), 20);
    await clock.advance(19);
    assert.deepEqual(seen, ['a@10', 'a-then', 'a-child@15']);
    await clock.advance(1);
    assert.deepEqual(seen, ['a@10', 'a-then', 'a-child@15', 'b@20', 'c@20']);
    assert.equal(clock.now().getTime(), 20);
  });

  it('shows pending timers and resolves timerSet when the code under test sets a matching one', async () => {
    const clock = new ManualClock(0);
    clock.setInterval(() => undefined, 1000);
    const backoff = clock.timerSet();
    assert.deepEqual(clock.pending, [{ dueMs: 1000, delayMs: 1000, interval: true }]);
    setImmediate(() => clock.setTimeout(() => undefined, 50));
    assert.deepEqual(await backoff, { dueMs: 50, delayMs: 50, interval: false });
    assert.deepEqual(await clock.timerSet((timer) => timer.interval), { dueMs: 1000, delayMs: 1000, interval: true });
  });

  it('advances until a promise that needs both time and I/O settles', async () => {
    const clock = new ManualClock(0);
    const work = (async () => {
      await clock.sleep(5_000);
      await new Promise((resolve) => setTimeout(resolve, 2));
      await clock.sleep(5_000);
      return 'done';
    })();
    assert.equal(await clock.advanceUntil(work, 1000), 'done');
    assert.ok(clock.now().getTime() >= 10_000);
  });
});
