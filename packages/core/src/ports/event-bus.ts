/**
 * Publish/subscribe with replay. Each topic numbers its events 1, 2, 3, … in publish order; a
 * subscriber that passes `after: N` first receives the retained events numbered above N (a bounded
 * backlog per topic), then live ones, each exactly once and in order.
 */
export const EventBus = Symbol.for('runloom.EventBus');

export interface BusEvent<T = unknown> {
  topic: string;
  seq: number;
  data: T;
}

export interface Subscription {
  unsubscribe(): void;
}

export interface EventBus {
  publish<T>(topic: string, data: T): Promise<BusEvent<T>>;
  subscribe<T>(topic: string, handler: (event: BusEvent<T>) => void, options?: { after?: number }): Subscription;
  close(): Promise<void>;
}
