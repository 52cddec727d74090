/**
 * Publish/subscribe with replay. Each topic numbers its events 1, 2, 3, … in publish order; a
 * subscriber that passes `after: N` first receives the retained events numbered above N (a bounded
 * backlog per topic: the last `backlogPerTopic` events), then live ones, each exactly once and in
 * order. Every adapter passes `adapters/event-bus.contract.ts`.
 *
 * Two bindings share this interface:
 * - `EventBus`: in-process notifications that need not outlive the process (a run's outcome for the
 *   request waiting on it). The default adapter keeps everything in memory, so publishing costs no
 *   write.
 * - `DurableEventBus`: streams a client replays after a restart (`GET /workspace/{id}/events` with
 *   `Last-Event-ID`). `publish` resolves once the event is stored durably with its number; the
 *   numbering and the backlog live in the store, so they survive a restart, and instances sharing a
 *   store (PostgreSQL) number one topic together without ever giving two events the same number.
 *   Live delivery reaches the subscribers of the publishing process at once; another process's
 *   subscribers receive its events on replay, and live once they are woken (on PostgreSQL,
 *   `PostgresEventBus` wakes them with LISTEN/NOTIFY).
 */
export const EventBus = Symbol.for('runloom.EventBus');
export const DurableEventBus = Symbol.for('runloom.DurableEventBus');

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
  /** Stops delivering to every subscriber; a `publish` or `subscribe` after it throws. */
  close(): Promise<void>;
}
