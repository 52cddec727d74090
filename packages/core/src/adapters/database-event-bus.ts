import { type Database, type Doc, DuplicateIdError, type Migration, WriteConflictError } from '../ports/database';
import type { BusEvent, EventBus, Subscription } from '../ports/event-bus';
import type { Logger } from '../ports/logger';
import { BusSubscriber } from './event-bus-subscriber';

export const BUS_EVENTS_COLLECTION = 'bus_events';

export const eventBusMigrations: Migration[] = [
  { id: 'event-bus/001-create', steps: [{ createCollection: BUS_EVENTS_COLLECTION, fields: { topic: 'text', seq: 'integer' } }] },
];

/** A stored event. Its id is `<topic>/<seq>`, so the store refuses a number given twice. */
interface EventDoc extends Doc {
  topic: string;
  seq: number;
  data: unknown;
}

export interface DatabaseEventBusOptions {
  database: Database;
  /** Told about handlers that throw and about failed replays and trims. */
  logger?: Logger;
  /** Events kept per topic for replay; at least 1 (the newest event carries the topic's numbering). */
  backlogPerTopic?: number;
  /**
   * Topics whose state (numbering, subscribers) this process keeps at most; past that the least
   * recently published topic without subscribers is forgotten and read from the store if used again.
   */
  maxTopics?: number;
}

interface PendingPublish {
  data: unknown;
  resolve(event: BusEvent<unknown>): void;
  reject(error: unknown): void;
}

interface TopicState {
  name: string;
  /** The highest number known to be stored; undefined until read from the store. */
  head: number | undefined;
  subscribers: Set<BusSubscriber>;
  /** Publishes waiting for the next write, in call order. */
  queue: PendingPublish[];
  /** The running write loop, if any. */
  flushing: Promise<void> | undefined;
  /** The delivery to subscribers running, if any: deliveries (own batches, wake-ups) run one after another. */
  delivering: Promise<void> | undefined;
}

/** Events stored in one write at most. */
const MAX_BATCH = 256;
/** Writes tried before a publish gives up because other instances keep taking its numbers. */
const MAX_NUMBERING_ATTEMPTS = 50;

/**
 * The `DurableEventBus` on the `Database` port (ports/event-bus.ts): every event is a document of
 * `bus_events`, so the numbering and the backlog survive a restart and instances sharing a
 * PostgreSQL database number a topic together.
 *
 * - **Numbering, race-free**: publishes of one topic queue up in this process and go to the store
 *   as one batch of inserts numbered from the topic's head. Each event's id is `<topic>/<seq>`, so
 *   when another instance has taken a number the insert fails as a duplicate, the batch is
 *   rejected whole, and it is numbered again from the head read anew. `publish` resolves once its
 *   batch is durable.
 * - **Live delivery** in this process right after the write, in number order. Before handing over a
 *   batch that starts past what its subscribers last received (another instance published in
 *   between), the gap is read from the store first, so they see no hole. Events published elsewhere
 *   reach them live only with such a batch, or when a subclass that hears of other instances'
 *   publishes (`PostgresEventBus`, LISTEN/NOTIFY) calls `wake`; every batch stored here is
 *   announced through `stored` for it.
 * - **Replay** (`after`): the subscriber is registered at once and holds live events aside while
 *   the retained events above `after` are read; it then receives those, then the live ones it has
 *   not seen (see `BusSubscriber`).
 * - **Bounded backlog**: replay reads only the newest `backlogPerTopic` events; older ones are
 *   deleted in the background each time a topic's numbering crosses a tenth of the backlog, so the
 *   store holds at most about 1.1× the backlog per topic and trimming costs a write per tenth.
 */
export class DatabaseEventBus implements EventBus {
  private readonly database: Database;
  protected readonly logger: Logger | undefined;
  private readonly backlogPerTopic: number;
  private readonly trimEvery: number;
  private readonly maxTopics: number;
  private readonly topics = new Map<string, TopicState>();
  /** Trims run one after another, so two of this process never delete the same events. */
  private trimming: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(options: DatabaseEventBusOptions) {
    this.database = options.database;
    this.logger = options.logger;
    this.backlogPerTopic = options.backlogPerTopic ?? 1000;
    this.maxTopics = options.maxTopics ?? 10_000;
    if (!(Number.isInteger(this.backlogPerTopic) && this.backlogPerTopic >= 1)) throw new Error('backlogPerTopic must be an integer of 1 or more');
    if (!(this.maxTopics >= 1)) throw new Error('maxTopics must be 1 or more');
    this.trimEvery = Math.ceil(this.backlogPerTopic / 10);
  }

  publish<T>(topic: string, data: T): Promise<BusEvent<T>> {
    if (this.closed) return Promise.reject(new Error('event bus is closed'));
    const state = this.touch(topic);
    const published = new Promise<BusEvent<T>>((resolve, reject) => {
      state.queue.push({ data, resolve: resolve as (event: BusEvent<unknown>) => void, reject });
    });
    state.flushing ??= this.flush(state);
    return published;
  }

  subscribe<T>(topic: string, handler: (event: BusEvent<T>) => void, options: { after?: number } = {}): Subscription {
    if (this.closed) throw new Error('event bus is closed');
    const state = this.topic(topic);
    const after = options.after;
    // Without `after`: from the newest event this process knows of, else from the stored head (read
    // while live events are held aside, so one stored by another instance meanwhile is not skipped).
    const start = after ?? state.head;
    const subscriber = new BusSubscriber(
      start,
      handler as (event: BusEvent<unknown>) => void,
      (error, event) => this.logger?.warn({ topic: event.topic, seq: event.seq, error: errorMessage(error) }, 'event handler failed'),
      (self) => state.subscribers.delete(self),
      start === undefined || after !== undefined,
    );
    state.subscribers.add(subscriber);
    if (after !== undefined) void this.replay(subscriber, topic, after);
    else if (start === undefined) void this.startAtHead(subscriber, topic);
    return subscriber;
  }

  async close(): Promise<void> {
    this.closed = true;
    const running: Promise<void>[] = [this.trimming];
    for (const state of this.topics.values()) {
      for (const subscriber of state.subscribers) subscriber.active = false;
      if (state.flushing) running.push(state.flushing);
    }
    // Publishes already accepted finish their writes before the store is closed after this.
    await Promise.allSettled(running);
    this.topics.clear();
  }

  /** Writes the queued publishes of `state` batch after batch, each delivered before the next. */
  private async flush(state: TopicState): Promise<void> {
    try {
      while (state.queue.length > 0) {
        const batch = state.queue.splice(0, MAX_BATCH);
        let events: BusEvent<unknown>[];
        try {
          events = await this.store(state, batch.map((publish) => publish.data));
        } catch (error) {
          state.head = undefined;
          for (const publish of batch) publish.reject(error);
          continue;
        }
        this.stored(state.name, events);
        await this.serially(state, () => this.deliverAfterGap(state, events));
        batch.forEach((publish, index) => publish.resolve(events[index]!));
        this.trimAfter(state.name, events);
      }
    } finally {
      state.flushing = undefined;
      this.evictIdleTopics();
    }
  }

  /** Called once a batch of this process's events is stored, before its publishes resolve. */
  protected stored(_topic: string, _events: readonly BusEvent<unknown>[]): void {}

  /**
   * Another instance stored events of `topic` from number `first` on (`events`, when it sent them
   * along): hands them to this process's subscribers in order, after whatever they missed before
   * them (read from the store, as is everything when `events` is not given).
   */
  protected wake(topic: string, first: number, events?: readonly BusEvent<unknown>[]): void {
    const state = this.topics.get(topic);
    if (!state || state.subscribers.size === 0 || this.closed) return;
    void this.serially(state, () => (events && events.length > 0 ? this.deliverAfterGap(state, events) : this.deliverStored(state, first - 1)));
  }

  /** Names of the topics subscribed to here: what a subclass reads again after it may have missed wake-ups. */
  protected subscribedTopics(): string[] {
    return [...this.topics.values()].filter((state) => state.subscribers.size > 0).map((state) => state.name);
  }

  /**
   * Runs `delivery` after the topic's previous one, so subscribers get events in number order; at
   * once when none is running (an own batch reaches subscribers in the tick its write ends).
   */
  private serially(state: TopicState, delivery: () => Promise<void>): Promise<void> {
    const running = state.delivering ? state.delivering.then(delivery) : delivery();
    const settled: Promise<void> = running.finally(() => {
      if (state.delivering === settled) state.delivering = undefined;
    });
    state.delivering = settled;
    return settled;
  }

  /** Inserts `data` numbered from the topic's head; numbered again when another instance took a number. */
  private async store(state: TopicState, data: unknown[]): Promise<BusEvent<unknown>[]> {
    for (let attempt = 1; ; attempt += 1) {
      state.head ??= await this.readHead(state.name);
      const first = state.head + 1;
      const events = data.map((item, index) => ({ topic: state.name, seq: first + index, data: item }));
      try {
        await this.database.write(events.map((event) => ({ op: 'insert', collection: BUS_EVENTS_COLLECTION, doc: toDoc(event) })));
        state.head = first + data.length - 1;
        return events;
      } catch (error) {
        if (!(error instanceof DuplicateIdError) || attempt === MAX_NUMBERING_ATTEMPTS) throw error;
        state.head = undefined;
      }
    }
  }

  /**
   * Delivers `events`, after the stored ones a subscriber here has not seen although they come
   * before them: published by another instance meanwhile.
   */
  private async deliverAfterGap(state: TopicState, events: readonly BusEvent<unknown>[]): Promise<void> {
    const first = events[0]!.seq;
    await this.deliverStored(state, first - 1, first);
    this.dispatch(state, events);
  }

  /**
   * Delivers the stored events after the last one each subscriber saw (`known`: what a subscriber
   * that has seen none is taken to have), up to `before` when given.
   */
  private async deliverStored(state: TopicState, known: number, before = Number.POSITIVE_INFINITY): Promise<void> {
    const behind = Math.min(known, ...[...state.subscribers].map((subscriber) => subscriber.lastSeen ?? known));
    if (behind >= before - 1) return;
    try {
      const missed = await this.readStored(state.name, behind);
      this.dispatch(state, missed.filter((event) => event.seq < before));
    } catch (error) {
      this.logger?.warn({ topic: state.name, error: errorMessage(error) }, 'reading events published elsewhere failed');
    }
  }

  /** Hands `events` to every subscriber; each skips what it has already had. */
  private dispatch(state: TopicState, events: readonly BusEvent<unknown>[]): void {
    for (const event of events) {
      for (const subscriber of [...state.subscribers]) subscriber.deliver(event);
    }
  }

  private async replay(subscriber: BusSubscriber, topic: string, after: number): Promise<void> {
    let events: BusEvent<unknown>[] = [];
    let resumeAfter: number | undefined;
    try {
      events = await this.read(topic, { after });
      // A number the topic never reached (a store restored from an older backup): the subscriber
      // takes what comes from the newest stored event on, rather than waiting for the numbering to pass it.
      if (events.length === 0 && after > 0) resumeAfter = Math.min(after, await this.readHead(topic));
    } catch (error) {
      this.logger?.error({ topic, after, error: errorMessage(error) }, 'replaying stored events failed; delivering live events only');
    }
    subscriber.release(events, resumeAfter);
  }

  /**
   * Starts `subscriber` (no `after`, the topic's head unknown here) at the stored head, or before the
   * first live event it was handed meanwhile; what is stored past that comes first.
   */
  private async startAtHead(subscriber: BusSubscriber, topic: string): Promise<void> {
    try {
      const head = await this.readHead(topic);
      const from = Math.min(head, (subscriber.firstHeld ?? Number.POSITIVE_INFINITY) - 1);
      const stored = await this.readStored(topic, from);
      // Only what precedes the live events held meanwhile, which follow it: when the backlog was
      // trimmed before this read, it starts past some of them, and handed over first it made
      // them look seen (lost).
      const firstHeld = subscriber.firstHeld ?? Number.POSITIVE_INFINITY;
      subscriber.release(stored.filter((event) => event.seq < firstHeld), from);
    } catch (error) {
      this.logger?.error({ topic, error: errorMessage(error) }, 'reading where a topic stands failed; delivering live events only');
      subscriber.release([]);
    }
  }

  /** The retained events of `topic` numbered above `after`, oldest first: at most the newest `backlogPerTopic`. */
  private async read(topic: string, range: { after: number }): Promise<BusEvent<unknown>[]> {
    const docs = (await this.database.find(BUS_EVENTS_COLLECTION, {
      where: { topic, seq: { gt: range.after } },
      orderBy: [{ field: 'seq', direction: 'desc' }],
      limit: this.backlogPerTopic,
    })) as EventDoc[];
    const newest = docs[0]?.seq ?? 0;
    // Events past the backlog but not trimmed yet are not replayed: the backlog is exact.
    return docs
      .filter((doc) => doc.seq > newest - this.backlogPerTopic)
      .reverse()
      .map((doc) => ({ topic, seq: doc.seq, data: doc.data }));
  }

  /**
   * Every stored event of `topic` numbered above `after`, oldest first: what live subscribers
   * missed, not bounded by the replay's backlog (a subscriber behind by more than it still gets
   * each event not trimmed yet).
   */
  private async readStored(topic: string, after: number): Promise<BusEvent<unknown>[]> {
    const docs = (await this.database.find(BUS_EVENTS_COLLECTION, { where: { topic, seq: { gt: after } }, orderBy: [{ field: 'seq' }] })) as EventDoc[];
    return docs.map((doc) => ({ topic, seq: doc.seq, data: doc.data }));
  }

  private async readHead(topic: string): Promise<number> {
    const [newest] = await this.database.find(BUS_EVENTS_COLLECTION, { where: { topic }, orderBy: [{ field: 'seq', direction: 'desc' }], limit: 1 });
    return (newest as EventDoc | undefined)?.seq ?? 0;
  }

  /** Deletes events older than the backlog when `events` crossed a multiple of `trimEvery`. */
  private trimAfter(topic: string, events: BusEvent<unknown>[]): void {
    const last = events.at(-1)!.seq;
    const before = events[0]!.seq - 1;
    if (Math.floor(last / this.trimEvery) === Math.floor(before / this.trimEvery) || last <= this.backlogPerTopic) return;
    this.trimming = this.trimming.then(async () => {
      try {
        const old = await this.database.find(BUS_EVENTS_COLLECTION, { where: { topic, seq: { lte: last - this.backlogPerTopic } }, limit: 10 * this.trimEvery });
        if (old.length > 0) await this.database.write(old.map((doc) => ({ op: 'delete', collection: BUS_EVENTS_COLLECTION, id: doc.id })));
      } catch (error) {
        // Another instance trimmed some of the same events first: the next trim takes the rest.
        if (!(error instanceof WriteConflictError)) this.logger?.warn({ topic, error: errorMessage(error) }, 'trimming the event backlog failed');
      }
    });
  }

  /** The state of `topic`, marked most recently used (eviction takes from the front). */
  private touch(topic: string): TopicState {
    const state = this.topic(topic);
    this.topics.delete(topic);
    this.topics.set(topic, state);
    return state;
  }

  private topic(name: string): TopicState {
    let state = this.topics.get(name);
    if (!state) {
      state = { name, head: undefined, subscribers: new Set(), queue: [], flushing: undefined, delivering: undefined };
      this.topics.set(name, state);
    }
    return state;
  }

  private evictIdleTopics(): void {
    if (this.topics.size <= this.maxTopics) return;
    for (const [name, state] of this.topics) {
      if (this.topics.size <= this.maxTopics) return;
      if (state.subscribers.size === 0 && !state.flushing) this.topics.delete(name);
    }
  }
}

function toDoc(event: BusEvent<unknown>): EventDoc {
  return { id: `${event.topic}/${event.seq}`, topic: event.topic, seq: event.seq, data: event.data };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
