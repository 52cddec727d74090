import { strict as assert } from 'node:assert';
import type { BusEvent, EventBus } from '../ports/event-bus';

/** A fresh, empty bus for one test, and what a durable or shared adapter can do beyond it. */
export interface EventBusTestBed {
  bus: EventBus;
  /**
   * Durable adapters (`DurableEventBus`): closes `bus` and its store, and opens a new bus on the same
   * store, as a restart of the process would.
   */
  reopen?(): Promise<EventBus>;
  /** Adapters whose store several instances share: one more bus on the same store, open beside `bus`. */
  another?(): Promise<EventBus>;
  /**
   * Whether a subscriber of a bus from `another` receives the events published on `bus` live, as
   * they are published, rather than only on replay or with a later event of its own bus.
   */
  liveAcrossInstances?: boolean;
  /** Called after every bus of the test is closed. */
  cleanup?(): Promise<void>;
}

/**
 * The one contract every `EventBus` adapter passes. `createBus` returns a fresh, empty bus that
 * keeps `backlogPerTopic` events per topic for replay. Delivery may be asynchronous: assertions wait.
 * The cases of durable and shared stores run when the test bed offers `reopen` and `another`.
 */
export function describeEventBusContract(name: string, createBus: (options: { backlogPerTopic: number }) => Promise<EventBusTestBed>): void {
  describe(`EventBus contract: ${name}`, () => {
    let bed: EventBusTestBed;
    let bus: EventBus;
    /** Buses the test opened besides `bus` (`another`). */
    let others: EventBus[];
    beforeEach(async () => {
      bed = await createBus({ backlogPerTopic: 5 });
      bus = bed.bus;
      others = [];
    });
    afterEach(async () => {
      for (const other of others) await other.close();
      await bus.close();
      await bed.cleanup?.();
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

    it('after a restart, replays the retained events and numbers on from the last one (durable adapters)', async function () {
      if (!bed.reopen) this.skip();
      for (let n = 1; n <= 7; n += 1) await bus.publish('t', n);
      await bus.publish('u', 'u1');
      bus = await bed.reopen!();
      const all = collect<number>('t', { after: 0 });
      const missed = collect<number>('t', { after: 5 });
      await eventually(() => {
        assert.deepEqual(all.seqs(), [3, 4, 5, 6, 7], 'the backlog of 5, kept across the restart');
        assert.deepEqual(missed.seqs(), [6, 7]);
      });
      assert.deepEqual(all.events.map((event) => event.data), [3, 4, 5, 6, 7]);
      assert.equal((await bus.publish('t', 8)).seq, 8);
      assert.equal((await bus.publish('u', 'u2')).seq, 2);
      await eventually(() => assert.deepEqual(missed.seqs(), [6, 7, 8], 'live after replay, nothing twice'));
    });

    it('gives concurrent publishers on one shared store distinct, increasing numbers (shared adapters)', async function () {
      if (!bed.another) this.skip();
      const second = await bed.another!();
      others.push(second);
      const perBus = 40;
      const publishAll = (publisher: EventBus, label: string) =>
        Promise.all(Array.from({ length: perBus }, (_, n) => publisher.publish('t', `${label}${n}`)));
      const [fromFirst, fromSecond] = await Promise.all([publishAll(bus, 'a'), publishAll(second, 'b')]);
      const all = [...fromFirst, ...fromSecond].map((event) => event.seq).sort((x, y) => x - y);
      assert.deepEqual(all, Array.from({ length: 2 * perBus }, (_, n) => n + 1), 'every number once, none skipped');
      for (const own of [fromFirst, fromSecond]) {
        const seqs = own.map((event) => event.seq);
        assert.deepEqual(seqs, [...seqs].sort((x, y) => x - y), 'one publisher’s events numbered in its call order');
      }
      // Either instance replays the same retained events, whoever published them.
      const byNumber = new Map([...fromFirst, ...fromSecond].map((event) => [event.seq, event.data]));
      const expected = [76, 77, 78, 79, 80].map((seq) => [seq, byNumber.get(seq)]);
      const replayFirst: BusEvent<string>[] = [];
      const replaySecond: BusEvent<string>[] = [];
      bus.subscribe<string>('t', (event) => replayFirst.push(event), { after: 0 });
      second.subscribe<string>('t', (event) => replaySecond.push(event), { after: 0 });
      await eventually(() => {
        assert.deepEqual(replayFirst.map((event) => [event.seq, event.data]), expected);
        assert.deepEqual(replaySecond.map((event) => [event.seq, event.data]), expected);
      });
    });

    it('delivers events published on one instance to subscribers on another, live, in order, with the same numbers (adapters that wake other instances)', async function () {
      if (!bed.another || !bed.liveAcrossInstances) this.skip();
      const second = await bed.another!();
      others.push(second);
      const live: BusEvent<unknown>[] = [];
      second.subscribe('t', (event) => live.push(event));
      const here = collect<unknown>('t');
      // A burst (batched writes), one event from the other side, then data too large for a wake-up message.
      const published: BusEvent<unknown>[] = await Promise.all(Array.from({ length: 30 }, (_, n) => bus.publish<unknown>('t', { n })));
      published.push(await second.publish('t', 'from the other instance'));
      published.push(await bus.publish('t', 'x'.repeat(20_000)));
      published.push(await bus.publish('t', { after: 'large' }));
      assert.deepEqual(published.map((event) => event.seq), Array.from({ length: 33 }, (_, n) => n + 1));
      const expected = published.map((event) => [event.seq, event.data]);
      await eventually(() => {
        assert.deepEqual(live.map((event) => [event.seq, event.data]), expected);
        assert.deepEqual(here.events.map((event) => [event.seq, event.data]), expected);
      });
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

/**
 * Retries an assertion until it holds (asynchronous adapters deliver a little later). The wait is
 * generous because a passing check returns at once: on a loaded machine PostgreSQL took over 2 s
 * to deliver the 200 concurrent publishes, and the check failed with events still on their way.
 */
async function eventually(check: () => void, timeoutMs = 10_000): Promise<void> {
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
