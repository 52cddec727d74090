import assert from 'node:assert/strict';
import { ManualClock } from '../../testing/manual-clock';
import { NO_PROVIDER_LIMITS, ProviderGates, type ProviderLimits, type ProviderPermit } from './provider-gates';

const never = new AbortController().signal;
const limits = (maxConcurrency: number | null, requestsPerMinute: number | null): ProviderLimits => ({ maxConcurrency, requestsPerMinute });

/** Starts an acquire and records its grant in `order` under `name`. */
function acquire(gates: ProviderGates, order: string[], name: string, account: string, given: ProviderLimits, signal = never): Promise<ProviderPermit> {
  return gates.acquire(account, 'openai', given, signal).then((permit) => {
    order.push(name);
    return permit;
  });
}

/** Delays of the timers still armed. */
const delays = (clock: ManualClock): number[] => clock.pending.map((timer) => timer.dueMs - clock.now().getTime());

/** Lets granted acquires' continuations run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('ProviderGates', () => {
  it('lets calls through at once when the account set no limit', async () => {
    const time = new ManualClock(Date.parse('2025-01-01T00:00:00Z'));
    const gates = new ProviderGates(time);
    const order: string[] = [];
    await Promise.all(['1', '2', '3'].map((name) => acquire(gates, order, name, 'a', NO_PROVIDER_LIMITS)));
    assert.deepEqual(order, ['1', '2', '3']);
  });

  it('keeps an account to its max_concurrency on a provider, first come first served, other accounts unaffected', async () => {
    const time = new ManualClock(Date.parse('2025-01-01T00:00:00Z'));
    const gates = new ProviderGates(time);
    const order: string[] = [];
    const first = await acquire(gates, order, 'a1', 'a', limits(2, null));
    await acquire(gates, order, 'a2', 'a', limits(2, null));
    const third = acquire(gates, order, 'a3', 'a', limits(2, null));
    const fourth = acquire(gates, order, 'a4', 'a', limits(2, null));
    await acquire(gates, order, 'b1', 'b', limits(2, null));
    await settle();
    assert.deepEqual(order, ['a1', 'a2', 'b1']);
    first.release();
    first.release();
    await third;
    await settle();
    // A permit released twice frees one call only.
    assert.deepEqual(order, ['a1', 'a2', 'b1', 'a3']);
    (await third).release();
    await fourth;
    assert.deepEqual(order, ['a1', 'a2', 'b1', 'a3', 'a4']);
    assert.deepEqual(delays(time), [], 'a concurrency limit waits on releases, not on time');
  });

  it('backs a provider off for the account as long as the vendor asked, holding no permit meanwhile', async () => {
    const time = new ManualClock(Date.parse('2025-01-01T00:00:00Z'));
    const gates = new ProviderGates(time);
    const order: string[] = [];
    const permit = await acquire(gates, order, 'first', 'a', limits(1, null));
    // The vendor answered 429, retry-after 30 s: the call gives its permit back and waits its turn again.
    gates.backOff('a', 'openai', 30_000);
    permit.release();
    const retry = acquire(gates, order, 'retry', 'a', limits(1, null));
    const other = acquire(gates, order, 'other run', 'a', limits(1, null));
    await acquire(gates, order, 'other account', 'b', limits(1, null));
    await settle();
    assert.deepEqual(order, ['first', 'other account']);
    assert.deepEqual(delays(time), [30_000]);
    await time.advance(29_999);
    await settle();
    assert.deepEqual(order, ['first', 'other account']);
    await time.advance(1);
    (await retry).release();
    await other;
    assert.deepEqual(order, ['first', 'other account', 'retry', 'other run']);
  });

  it('spaces calls to requests_per_minute once the minute’s burst is spent', async () => {
    const time = new ManualClock(Date.parse('2025-01-01T00:00:00Z'));
    const gates = new ProviderGates(time);
    const order: string[] = [];
    for (const name of ['1', '2']) (await acquire(gates, order, name, 'a', limits(null, 2))).release();
    const third = acquire(gates, order, '3', 'a', limits(null, 2));
    await settle();
    assert.deepEqual(order, ['1', '2']);
    // Two a minute: the next token comes after 30 s.
    assert.deepEqual(delays(time), [30_000]);
    await time.advance(30_000);
    await third;
    assert.deepEqual(order, ['1', '2', '3']);
  });

  it('drops a waiting call whose run is cancelled, and the next one goes', async () => {
    const time = new ManualClock(Date.parse('2025-01-01T00:00:00Z'));
    const gates = new ProviderGates(time);
    const order: string[] = [];
    const held = await acquire(gates, order, 'held', 'a', limits(1, null));
    const cancel = new AbortController();
    const cancelled = acquire(gates, order, 'cancelled', 'a', limits(1, null), cancel.signal);
    const next = acquire(gates, order, 'next', 'a', limits(1, null));
    cancel.abort(new Error('run cancelled'));
    await assert.rejects(cancelled, /run cancelled/);
    held.release();
    await next;
    assert.deepEqual(order, ['held', 'next']);
  });

  it('waits a retry delay on the timer, and stops waiting when the run is cancelled', async () => {
    const time = new ManualClock(Date.parse('2025-01-01T00:00:00Z'));
    const gates = new ProviderGates(time);
    const waited = gates.delay(2000, never);
    await time.advance(2000);
    await waited;
    const cancel = new AbortController();
    const cancelled = gates.delay(2000, cancel.signal);
    cancel.abort(new Error('run cancelled'));
    await assert.rejects(cancelled, /run cancelled/);
  });
});
