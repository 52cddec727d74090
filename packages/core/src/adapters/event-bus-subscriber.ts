import type { BusEvent, Subscription } from '../ports/event-bus';

type Handler = (event: BusEvent<unknown>) => void;

/**
 * One subscription of an `EventBus` adapter (shared by the memory and the database buses). It
 * remembers the last sequence number it handed over, so replay and live delivery never repeat an
 * event, and it calls its handler one event at a time: an event published while the handler runs
 * (by the handler itself, or during replay) waits until the call returns.
 *
 * A subscriber created `holding` keeps live events aside until `release(replayed)` hands it the
 * replay read from a store: the replay goes first, then the live events it does not already cover.
 */
export class BusSubscriber implements Subscription {
  private pending: BusEvent<unknown>[] = [];
  private delivering = false;
  active = true;

  /**
   * @param lastSeq the number already seen: only later events are handed over; undefined takes
   *   every event delivered from now on.
   */
  constructor(
    private lastSeq: number | undefined,
    private readonly handler: Handler,
    private readonly onError: (error: unknown, event: BusEvent<unknown>) => void,
    private readonly detach: (subscriber: BusSubscriber) => void,
    private holding = false,
  ) {}

  /**
   * The last number handed over, once it is known and no replay is pending: what a bus that can
   * tell this subscriber missed events (published by another process) reads them from.
   */
  get lastSeen(): number | undefined {
    return this.holding ? undefined : this.lastSeq;
  }

  /** The number of the first live event held aside while holding, if any. */
  get firstHeld(): number | undefined {
    return this.holding ? this.pending[0]?.seq : undefined;
  }

  deliver(...events: BusEvent<unknown>[]): void {
    this.pending.push(...events);
    this.drain();
  }

  /**
   * Ends `holding`: delivers `replayed` (oldest first), then the live events that arrived meanwhile.
   * `resumeAfter` moves the last number seen back (never forward) when the store's numbering is behind it,
   * or sets it when none was known.
   */
  release(replayed: readonly BusEvent<unknown>[], resumeAfter?: number): void {
    if (resumeAfter !== undefined && this.lastSeq === undefined) {
      this.lastSeq = resumeAfter;
    } else if (resumeAfter !== undefined && this.lastSeq !== undefined) {
      // Live events that arrived while holding were published after subscribing: all of them are due.
      const firstLive = this.pending[0]?.seq ?? Number.POSITIVE_INFINITY;
      this.lastSeq = Math.min(this.lastSeq, resumeAfter, firstLive - 1);
    }
    this.pending = [...replayed, ...this.pending];
    this.holding = false;
    this.drain();
  }

  unsubscribe(): void {
    if (!this.active) return;
    this.active = false;
    this.pending = [];
    this.detach(this);
  }

  private drain(): void {
    if (this.delivering || this.holding) return;
    this.delivering = true;
    try {
      for (let next = this.pending.shift(); next && this.active; next = this.pending.shift()) {
        if (this.lastSeq !== undefined && next.seq <= this.lastSeq) continue;
        this.lastSeq = next.seq;
        this.call(next);
      }
    } finally {
      this.pending.length = 0;
      this.delivering = false;
    }
  }

  private call(event: BusEvent<unknown>): void {
    try {
      const result: unknown = this.handler(event);
      // An async handler's rejection is its own failure, like a throw; never an unhandled rejection.
      if (result instanceof Promise) result.catch((error: unknown) => this.onError(error, event));
    } catch (error) {
      this.onError(error, event);
    }
  }
}
