import assert from 'node:assert/strict';
import { MemoryEventBus } from '../../adapters/memory/memory-event-bus';
import type { BusEvent, EventBus } from '../../ports/event-bus';
import { ManualClock } from '../../testing/manual-clock';
import { RecordingLogger } from '../../testing/recording-logger';
import { LiveRelay, RELAY_ANSWER_MS, RELAY_SILENCE_MS, type RelaySource } from './live-relay';

/** A source the test writes to: `write` adds a batch, `end` ends it; `cancels` counts cancel requests. */
function testSource(): RelaySource & { write(...items: string[]): void; end(): void; cancels: number } {
  const written: string[] = [];
  let ended = false;
  const waiting = new Set<() => void>();
  const wakeAll = (): void => {
    for (const wake of waiting) wake();
    waiting.clear();
  };
  return {
    cancels: 0,
    write(...items) {
      written.push(...items);
      wakeAll();
    },
    end() {
      ended = true;
      wakeAll();
    },
    cancel() {
      this.cancels += 1;
    },
    async *items(signal) {
      // What there is now, even nothing, answers the join.
      let position = written.length;
      yield written.slice(0);
      for (;;) {
        if (position < written.length) {
          const batch = written.slice(position);
          position = written.length;
          yield batch;
        } else if (ended || signal.aborted) {
          return;
        } else {
          await new Promise<void>((resolve) => {
            waiting.add(resolve);
            signal.addEventListener('abort', () => resolve(), { once: true });
          });
        }
      }
    },
  };
}

/** Resolves once `condition` holds (relay messages go through the bus's asynchronous publishes). */
async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; !condition(); turn += 1) {
    if (turn > 1000) throw new Error('the condition never held');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('LiveRelay', () => {
  let bus: MemoryEventBus;
  let clock: ManualClock;
  /** Two instances' relays: on one bus, as instances sharing a database share its topics. */
  let here: LiveRelay;
  let there: LiveRelay;
  let published: number;
  /** Set: `here`'s instance is dead (it neither hears nor says anything). */
  let hereDead: boolean;
  beforeEach(() => {
    bus = new MemoryEventBus();
    published = 0;
    hereDead = false;
    const instanceBus = (dead: () => boolean): EventBus => ({
      publish: <T>(topic: string, data: T): Promise<BusEvent<T>> => {
        if (dead()) return Promise.resolve({ topic, seq: 0, data });
        published += 1;
        return bus.publish(topic, data);
      },
      subscribe: <T>(topic: string, handler: (event: BusEvent<T>) => void, options?: { after?: number }) =>
        bus.subscribe<T>(topic, (event) => dead() || handler(event), options),
      close: () => bus.close(),
    });
    clock = new ManualClock();
    here = new LiveRelay(instanceBus(() => hereDead), clock, new RecordingLogger());
    there = new LiveRelay(instanceBus(() => false), clock, new RecordingLogger());
  });
  afterEach(() => bus.close());

  it('publishes nothing while no instance asks for a source', async () => {
    const source = testSource();
    const served = here.serve('w1', 'k', source);
    source.write('a', 'b');
    source.end();
    await served.close();
    assert.equal(published, 0);
  });

  it('hands a follower every item from the first, then the later ones as they come, then the end', async () => {
    const source = testSource();
    const served = here.serve('w1', 'k', source);
    source.write('a', 'b');
    const items: string[] = [];
    let ended = false;
    const followed = there.follow('w1', 'k', { items: (batch) => items.push(...batch), end: () => (ended = true) });
    assert.equal(await followed.answered, true);
    source.write('c');
    await until(() => items.length === 3);
    // A second follower elsewhere makes the source send from the first again; the first follower takes nothing twice.
    const late: string[] = [];
    there.follow('w1', 'k', { items: (batch) => late.push(...batch), end: () => {} });
    await until(() => late.length === 3);
    source.write('d');
    source.end();
    await served.close();
    await until(() => ended);
    assert.deepEqual(items, ['a', 'b', 'c', 'd']);
    assert.deepEqual(late, ['a', 'b', 'c', 'd']);
  });

  it('follows only its own key in its own workspace', async () => {
    const mine = testSource();
    const other = testSource();
    const servedMine = here.serve('w1', 'k', mine);
    const servedOther = here.serve('w1', 'k2', other);
    const elsewhere = here.serve('w2', 'k', testSource());
    mine.write('mine');
    other.write('other');
    const items: string[] = [];
    assert.equal(await there.follow('w1', 'k', { items: (batch) => items.push(...batch), end: () => {} }).answered, true);
    mine.end();
    other.end();
    await Promise.all([servedMine.close(), servedOther.close(), elsewhere.close()]);
    assert.deepEqual(items, ['mine']);
  });

  it('passes a cancel to the source and answers once the source has ended', async () => {
    const source = testSource();
    const served = here.serve('w1', 'k', source);
    const cancelled = there.cancel('w1', 'k');
    await until(() => source.cancels === 1);
    let answered = false;
    void cancelled.then(() => (answered = true));
    await until(() => published >= 1);
    assert.equal(answered, false, 'not before the source has ended');
    source.end();
    await served.close();
    assert.equal(await cancelled, true);
  });

  it('says whether a source still runs: as the source says while served, no once it has ended or when nobody answers', async () => {
    let running = true;
    const source = { ...testSource(), running: () => running };
    const served = here.serve('w1', 'k', source);
    assert.equal(await there.isRunning('w1', 'k'), true);
    running = false;
    assert.equal(await there.isRunning('w1', 'k'), false, 'finishing up: served, no longer running');
    source.end();
    await served.close();
    const unanswered = there.isRunning('w1', 'k');
    await until(() => published >= 4);
    await clock.advance(RELAY_ANSWER_MS);
    assert.equal(await unanswered, false);
  });

  it('takes a source nobody serves as gone once RELAY_ANSWER_MS pass without an answer', async () => {
    let ended = false;
    const followed = there.follow('w1', 'nobody', { items: () => assert.fail('no items'), end: () => (ended = true) });
    const cancelled = there.cancel('w1', 'nobody');
    await clock.advance(RELAY_ANSWER_MS - 1);
    let settled = false;
    void Promise.race([followed.answered, cancelled]).then(() => (settled = true));
    await until(() => published === 2);
    assert.equal(settled, false, 'still waiting before the bound');
    await clock.advance(1);
    assert.equal(await followed.answered, false);
    assert.equal(await cancelled, false);
    assert.equal(ended, true);
  });

  it('keeps following a source that is silent but there, and ends a follower whose source’s instance died', async () => {
    const source = testSource();
    const served = here.serve('w1', 'k', source);
    let ended = false;
    const followed = there.follow('w1', 'k', { items: () => {}, end: () => (ended = true) });
    assert.equal(await followed.answered, true);
    // Silent: the follower pings, the source's instance answers, and it follows on.
    await clock.advance(RELAY_SILENCE_MS + RELAY_ANSWER_MS + 1000);
    assert.equal(ended, false);
    const beforeDeath = published;
    hereDead = true;
    for (let waited = 0; published === beforeDeath; waited += 1000) {
      assert.ok(waited <= RELAY_SILENCE_MS, 'a ping within the silence bound');
      await clock.advance(1000);
    }
    assert.equal(ended, false, 'pinged, waiting for the answer');
    await clock.advance(RELAY_ANSWER_MS - 1000);
    assert.equal(ended, false, 'still waiting for the answer');
    await clock.advance(1000);
    assert.equal(ended, true, 'no answer: the source is gone');
    hereDead = false;
    source.end();
    await served.close();
  });
});
