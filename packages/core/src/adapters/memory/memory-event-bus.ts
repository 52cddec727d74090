import type { BusEvent, EventBus, Subscription } from '../../ports/event-bus';
import type { Logger } from '../../ports/logger';
import { BusSubscriber } from '../event-bus-subscriber';

export interface MemoryEventBusOptions {
  /** Events kept per topic for replay (`subscribe(…, { after })`). */
  backlogPerTopic?: number;
  /**
   * Topics remembered at most; past that, the least recently published topic without subscribers
   * is forgotten (its numbering starts again at 1 if it is used again). Keeps a long-running
   * server's memory bounded when every run has a topic of its own.
   */
  maxTopics?: number;
  /** Told about handlers that throw. */
  logger?: Logger;
}

interface Topic {
  seq: number;
  /** Oldest first; at most `backlogPerTopic` long. */
  backlog: BusEvent<unknown>[];
  subscribers: Set<BusSubscriber>;
  /** Published but not yet handed to every subscriber (a handler may publish while being called). */
  undelivered: BusEvent<unknown>[];
  dispatching: boolean;
}

/**
 * The in-process `EventBus`: per-topic numbering 1, 2, 3, …, a bounded replay backlog per topic,
 * synchronous delivery in publish order. A handler that throws is logged and skipped; publish and the
 * other subscribers carry on.
 */
export class MemoryEventBus implements EventBus {
  private readonly topics = new Map<string, Topic>();
  private readonly backlogPerTopic: number;
  private readonly maxTopics: number;
  private readonly logger: Logger | undefined;
  private closed = false;

  constructor(options: MemoryEventBusOptions = {}) {
    this.backlogPerTopic = options.backlogPerTopic ?? 1000;
    this.maxTopics = options.maxTopics ?? 10_000;
    this.logger = options.logger;
    if (!(this.backlogPerTopic >= 0)) throw new Error('backlogPerTopic must be 0 or more');
    if (!(this.maxTopics >= 1)) throw new Error('maxTopics must be 1 or more');
  }

  async publish<T>(topic: string, data: T): Promise<BusEvent<T>> {
    this.assertOpen();
    const state = this.topic(topic);
    // Most recently published topics go to the end of the map: eviction takes from the front.
    this.topics.delete(topic);
    this.topics.set(topic, state);
    state.seq += 1;
    const event: BusEvent<T> = { topic, seq: state.seq, data };
    if (this.backlogPerTopic > 0) {
      state.backlog.push(event);
      if (state.backlog.length > this.backlogPerTopic) state.backlog.shift();
    }
    state.undelivered.push(event);
    this.dispatch(state);
    this.evictIdleTopics();
    return event;
  }

  subscribe<T>(topic: string, handler: (event: BusEvent<T>) => void, options: { after?: number } = {}): Subscription {
    this.assertOpen();
    const state = this.topic(topic);
    const after = options.after;
    const subscriber = new BusSubscriber(
      after ?? state.seq,
      handler as (event: BusEvent<unknown>) => void,
      (error, event) => this.logger?.warn({ topic: event.topic, seq: event.seq, error: errorMessage(error) }, 'event handler failed'),
      (self) => state.subscribers.delete(self),
    );
    // Registration and replay happen in one synchronous step, so no event is missed or repeated;
    // an event published by a handler during the replay queues behind it.
    state.subscribers.add(subscriber);
    if (after !== undefined) subscriber.deliver(...state.backlog.filter((event) => event.seq > after));
    return subscriber;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const state of this.topics.values()) {
      for (const subscriber of state.subscribers) subscriber.active = false;
    }
    this.topics.clear();
  }

  /** Hands events to subscribers in publish order, all subscribers one event before the next. */
  private dispatch(state: Topic): void {
    if (state.dispatching) return;
    state.dispatching = true;
    try {
      for (let event = state.undelivered.shift(); event; event = state.undelivered.shift()) {
        for (const subscriber of [...state.subscribers]) subscriber.deliver(event);
      }
    } finally {
      state.dispatching = false;
    }
  }

  private topic(name: string): Topic {
    let state = this.topics.get(name);
    if (!state) {
      state = { seq: 0, backlog: [], subscribers: new Set(), undelivered: [], dispatching: false };
      this.topics.set(name, state);
    }
    return state;
  }

  private evictIdleTopics(): void {
    if (this.topics.size <= this.maxTopics) return;
    for (const [name, state] of this.topics) {
      if (this.topics.size <= this.maxTopics) return;
      if (state.subscribers.size === 0) this.topics.delete(name);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('event bus is closed');
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
