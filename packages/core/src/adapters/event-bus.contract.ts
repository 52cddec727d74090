import assert from 'node:assert/strict';
import type { BusEvent, EventBus } from '../ports/event-bus';

/**
 * The one contract every `EventBus` adapter passes. `createBus` returns a fresh, empty bus that
 * keeps `backlogPerTopic` events per topic for replay. Delivery may be asynchronous: assertions wait.
 */
export function describeEventBusContract(name: string, createBus: (options: { backlogPerTopic: number }) => Promise<EventBus>): void {
  describe(`EventBus contract: ${name}`, () => {
    let bus: EventBus;
    beforeEach(async () => {
      bus = await createBus({ backlogPerTopic: 5 });
    });
    afterEach(async () => {
      await bus.close();
    });

    function collect<T>(topic: string, options?: { after?: number }): { events: BusEvent<T>[]; seqs: () => number[] } {
      const events: BusEvent<T>[] = [];
      bus.subscribe<T>(topic, (event) => events.push(event), options);
      return { events, seqs: () => events.map((event) => event.seq) };
    }

    it('numbers each topic’s events 1, 2, 3 … on its own', async () => {
      const a1 = await bus.publish('a', { n: 1 });
      const a2 = await bus.publish('a', { n: 2 });
      const b1 = await bus.publish('b', 'x');
      assert.deepEqual([a1.seq, a2.seq, b1.seq], [1, 2, 1]);
      assert.deepEqual(a2, { topic: 'a', seq: 2, data: { n: 2 } });
    });

    it('without `after`, delivers only events published after subscribing, in order', async () => {
      await bus.publish('t', 'before');
      const { events, seqs } = collect<string>('t');
      await bus.publish('t', 'one');
      await bus.publish('t', 'two');
      await bus.publish('other', 'elsewhere');
      await eventually(() => assert.deepEqual(seqs(), [2, 3]));
      assert.deepEqual(events.map((event) => [event.topic, event.data]), [['t', 'one'], ['t', 'two']]);
      // Events reach a subscriber in order: once a later one has arrived, anything extra would have too.
      await bus.publish('t', 'marker');
      await eventually(() => assert.deepEqual(seqs(), [2, 3, 4], 'nothing more, nothing twice'));
    });

    it('with `after`, replays the retained events above it, then live ones, each once', async () => {
      for (const n of [1, 2, 3]) await bus.publish('t', n);
      const fromStart = collect<number>('t', { after: 0 });
      const fromTwo = collect<number>('t', { after: 2 });
      const fromNow = collect<number>('t', { after: 3 });
      await bus.publish('t', 4);
      await eventually(() => {
        assert.deepEqual(fromStart.seqs(), [1, 2, 3, 4]);
        assert.deepEqual(fromTwo.seqs(), [3, 4]);
        assert.deepEqual(fromNow.seqs(), [4]);
      });
      assert.deepEqual(fromStart.events.map((event) => event.data), [1, 2, 3, 4]);
      await bus.publish('t', 5);
      await eventually(() => assert.deepEqual(fromStart.seqs(), [1, 2, 3, 4, 5], 'nothing twice before a later event'));
    });

    it('keeps a bounded backlog per topic: replay starts at the oldest retained event', async () => {
      for (let n = 1; n <= 12; n += 1) await bus.publish('t', n);
      await bus.publish('u', 'u1');
      const replay = collect<number>('t', { after: 0 });
      await eventually(() => assert.deepEqual(replay.seqs(), [8, 9, 10, 11, 12]));
      const other = collect<string>('u', { after: 0 });
      await eventually(() => assert.deepEqual(other.seqs(), [1]));
    });

    it('delivers concurrent publishes to every subscriber exactly once, in sequence order', async () => {
      const first = collect<number>('t');
      const second = collect<number>('t');
      await Promise.all(Array.from({ length: 200 }, (_, n) => bus.publish('t', n)));
      const expected = Array.from({ length: 200 }, (_, n) => n + 1);
      await eventually(() => {
        assert.deepEqual(first.seqs(), expected);
        assert.deepEqual(second.seqs(), expected);
      });
    });

    it('hands a subscriber that resumes mid-stream from the last event it saw a gapless, duplicate-free sequence', async () => {
      const watcher = collect<number>('t');
      const publishing = (async () => {
        for (let n = 1; n <= 40; n += 1) {
          await bus.publish('t', n);
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
      })();
      await eventually(() => assert.ok(watcher.events.length >= 10));
      const lastSeen = watcher.seqs().at(-1)!;
      const resumed = collect<number>('t', { after: lastSeen });
      await publishing;
      await eventually(() => assert.deepEqual(resumed.seqs(), Array.from({ length: 40 - lastSeen }, (_, index) => lastSeen + 1 + index)));
    });

    it('keeps publishing and delivering to others when a handler throws', async () => {
      bus.subscribe('t', () => {
        throw new Error('handler bug');
      });
      bus.subscribe('t', async () => {
        throw new Error('async handler bug');
      });
      const healthy = collect<string>('t');
      const published = await bus.publish('t', 'first');
      assert.equal(published.seq, 1);
      await bus.publish('t', 'second');
      await eventually(() => assert.deepEqual(healthy.seqs(), [1, 2]));
    });

    it('delivers an event a handler publishes after the one it is handling', async () => {
      const order: string[] = [];
      bus.subscribe<string>('t', (event) => {
        order.push(`a:${event.data}`);
        if (event.data === 'ping') void bus.publish('t', 'pong');
      });
      bus.subscribe<string>('t', (event) => order.push(`b:${event.data}`));
      await bus.publish('t', 'ping');
      await eventually(() => assert.deepEqual(order.filter((entry) => entry.startsWith('b:')), ['b:ping', 'b:pong']));
      assert.deepEqual(order.filter((entry) => entry.startsWith('a:')), ['a:ping', 'a:pong']);
    });

    it('gives a subscriber added by a handler, with `after`, each event once', async () => {
      const late: number[] = [];
      bus.subscribe<number>('t', (event) => {
        if (event.data === 2) bus.subscribe<number>('t', (inner) => late.push(inner.seq), { after: 0 });
      });
      for (const n of [1, 2, 3]) await bus.publish('t', n);
      await eventually(() => assert.deepEqual(late, [1, 2, 3]));
      await bus.publish('t', 4);
      await eventually(() => assert.deepEqual(late, [1, 2, 3, 4], 'nothing twice before a later event'));
    });

    it('stops delivering after unsubscribe', async () => {
      const events: number[] = [];
      const subscription = bus.subscribe<number>('t', (event) => events.push(event.data));
      await bus.publish('t', 1);
      await eventually(() => assert.deepEqual(events, [1]));
      subscription.unsubscribe();
      subscription.unsubscribe();
      // A subscriber still there shows when event 2 has been delivered.
      const witness = collect<number>('t', { after: 1 });
      await bus.publish('t', 2);
      await eventually(() => assert.deepEqual(witness.seqs(), [2]));
      assert.deepEqual(events, [1]);
    });

    it('drops every subscriber on close', async () => {
      const { events } = collect<number>('t');
      await bus.close();
      await bus.publish('t', 1).catch(() => undefined);
      await settle();
      assert.deepEqual(events, []);
    });
  });
}

/** Retries an assertion until it holds (asynchronous adapters deliver a little later). */
async function eventually(check: () => void, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}

/** Gives an asynchronous adapter time to deliver anything it should not. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 50));
}
