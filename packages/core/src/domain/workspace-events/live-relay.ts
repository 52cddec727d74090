import { inject, injectable } from 'inversify';
import { Clock } from '../../ports/clock';
import { DurableEventBus, type EventBus } from '../../ports/event-bus';
import { Logger } from '../../ports/logger';

/**
 * How long a follower waits for the instance running a source to answer (its join, or a ping)
 * before taking the source as gone (ended meanwhile, or its instance died).
 */
export const RELAY_ANSWER_MS = 5000;
/** A follower that has heard nothing of its source for this long pings it. */
export const RELAY_SILENCE_MS = 10_000;
/** How often a follower checks that it still hears from its source. */
const WATCH_MS = 1000;

/** What a source offers while it runs: its items from the first, and a way to stop it. */
export interface RelaySource {
  /**
   * Every item so far at once (possibly none: that batch is the answer to a join), then each later
   * batch as it comes (what piled up while one was sent), until the source ends; once `signal`
   * aborts (the source's instance is closing it) it hands over what is left and stops.
   */
  items(signal: AbortSignal): AsyncIterable<readonly string[]>;
  /** Another instance asked to cancel the source. */
  cancel(): void;
  /** Whether the source still runs (it may be served a little longer, finishing up); true when absent. */
  running?(): boolean;
}

/** What the instance following a source is handed. */
export interface RelayFollower {
  /** The next items, in order, each once. */
  items(items: readonly string[]): void;
  /** The source has ended, or is gone (its instance stopped answering): no item follows. */
  end(): void;
}

export interface ServedSource {
  /** The source has ended: its followers are told once its last items are sent. */
  close(): Promise<void>;
}

export interface FollowedSource {
  /** Resolves true once the source's instance answers with its items, false when none answered in time (or it had ended). */
  readonly answered: Promise<boolean>;
  leave(): void;
}

type RelayMessage =
  | { type: 'join'; key: string }
  | { type: 'ping'; key: string }
  | { type: 'alive'; key: string; running: boolean }
  | { type: 'cancel'; key: string }
  | { type: 'items'; key: string; first: number; items: readonly string[] }
  | { type: 'end'; key: string };

/**
 * Live sources (a thread reply being streamed, a command execution's output) followed from another
 * instance, on the `DurableEventBus` (ARCHITECTURE.md, "Beyond one machine"). A source lives in the
 * process that runs it; `serve` makes it reachable from the others for as long as it runs, and
 * costs nothing until another instance asks: no write, a subscription in memory.
 *
 * One topic per workspace (`live-relay:<workspaceId>`), so the rows it leaves in the bus's table
 * stay within a backlog per workspace. Messages name their source by `key`:
 * - `join`: an instance wants the source's items. Its instance answers with every item so far from
 *   the first (`items`, numbered by `first`), then the later ones as they come, then `end`. A
 *   second join gets the items from the first again; a follower keeps only what it lacks.
 * - `cancel`: stops the source (its `cancel`); `end` follows once it has ended.
 * - `ping`: a follower that heard nothing for `RELAY_SILENCE_MS` asks whether the source is still
 *   there; its instance answers `alive` (saying whether it still runs). Without an answer within
 *   `RELAY_ANSWER_MS` (to a join or a ping) the follower takes the source as gone and ends: a dead
 *   instance leaves no follower waiting forever. `isRunning` asks the same.
 * Nothing here is replayed: a follower subscribes before it asks, and the answer comes after.
 */
@injectable()
export class LiveRelay {
  constructor(
    @inject(DurableEventBus) private readonly bus: EventBus,
    @inject(Clock) private readonly clock: Clock,
    @inject(Logger) private readonly logger: Logger,
  ) {}

  /** Offers `source` under `key` to the other instances until `close`. */
  serve(workspaceId: string, key: string, source: RelaySource): ServedSource {
    const topic = topicOf(workspaceId);
    const closing = new AbortController();
    const senders: Promise<void>[] = [];
    let asked = false;
    const subscription = this.bus.subscribe<RelayMessage>(topic, ({ data }) => {
      if (data.key !== key || closing.signal.aborted) return;
      if (data.type === 'join') {
        asked = true;
        senders.push(this.send(topic, key, source, closing.signal));
      } else if (data.type === 'ping') {
        void this.publish(topic, { type: 'alive', key, running: source.running?.() ?? true });
      } else if (data.type === 'cancel') {
        asked = true;
        source.cancel();
      }
    });
    return {
      close: async () => {
        subscription.unsubscribe();
        closing.abort();
        await Promise.all(senders);
        if (asked) await this.publish(topic, { type: 'end', key });
      },
    };
  }

  /**
   * Follows the source `key` that another instance runs: its items from the first, then its end
   * (or its going away: see `ping`).
   */
  follow(workspaceId: string, key: string, follower: RelayFollower): FollowedSource {
    const topic = topicOf(workspaceId);
    const now = (): number => this.clock.now().getTime();
    let received = 0;
    let lastHeard = now();
    /** When the unanswered join or ping was sent. */
    let askedAt: number | undefined = lastHeard;
    let answer!: (answered: boolean) => void;
    const answered = new Promise<boolean>((resolve) => (answer = resolve));
    const stop = (): void => {
      subscription.unsubscribe();
      watch.cancel();
    };
    const ended = (): void => {
      answer(received > 0);
      stop();
      follower.end();
    };
    const subscription = this.bus.subscribe<RelayMessage>(topic, ({ data }) => {
      if (data.key !== key || data.type === 'join' || data.type === 'ping' || data.type === 'cancel') return;
      lastHeard = now();
      askedAt = undefined;
      if (data.type === 'end') return ended();
      if (data.type === 'items' && data.first <= received + 1) {
        const fresh = data.items.slice(received + 1 - data.first);
        received += fresh.length;
        answer(true);
        if (fresh.length > 0) follower.items(fresh);
      }
    });
    const watch = this.clock.setInterval(() => {
      if (askedAt !== undefined) {
        if (now() - askedAt >= RELAY_ANSWER_MS) ended();
      } else if (now() - lastHeard >= RELAY_SILENCE_MS) {
        askedAt = now();
        void this.publish(topic, { type: 'ping', key });
      }
    }, WATCH_MS);
    void this.publish(topic, { type: 'join', key });
    return { answered, leave: stop };
  }

  /** Whether the source `key` still runs on another instance: false when it has ended, or no instance answers in time. */
  isRunning(workspaceId: string, key: string): Promise<boolean> {
    return this.ask(workspaceId, key, 'ping', (data) => (data.type === 'alive' ? data.running : data.type === 'end' ? false : undefined));
  }

  /** Asks the instance running `key` to cancel it; resolves once it has ended, false when none answered in time. */
  cancel(workspaceId: string, key: string): Promise<boolean> {
    return this.ask(workspaceId, key, 'cancel', (data) => (data.type === 'end' ? true : undefined));
  }

  /**
   * Publishes a `request` for `key` and resolves with the first answer `answerOf` makes of a
   * message for it; false when none comes within `RELAY_ANSWER_MS`.
   */
  private ask(workspaceId: string, key: string, request: 'ping' | 'cancel', answerOf: (message: RelayMessage) => boolean | undefined): Promise<boolean> {
    const topic = topicOf(workspaceId);
    return new Promise<boolean>((resolve) => {
      const finish = (answer: boolean): void => {
        subscription.unsubscribe();
        timeout.cancel();
        resolve(answer);
      };
      const subscription = this.bus.subscribe<RelayMessage>(topic, ({ data }) => {
        const answer = data.key === key ? answerOf(data) : undefined;
        if (answer !== undefined) finish(answer);
      });
      const timeout = this.clock.setTimeout(() => finish(false), RELAY_ANSWER_MS);
      void this.publish(topic, { type: request, key });
    });
  }

  /** Sends the source's items from the first, batch after batch, until it ends or is closed. */
  private async send(topic: string, key: string, source: RelaySource, signal: AbortSignal): Promise<void> {
    let first = 1;
    let answered = false;
    try {
      for await (const items of source.items(signal)) {
        // The first batch answers the join, even empty; later empty ones say nothing.
        if (items.length === 0 && answered) continue;
        answered = true;
        await this.publish(topic, { type: 'items', key, first, items });
        first += items.length;
      }
    } catch (error) {
      this.logger.warn({ key, error: (error as Error).message }, 'relaying a live source to another instance failed');
    }
  }

  private async publish(topic: string, message: RelayMessage): Promise<void> {
    try {
      await this.bus.publish(topic, message);
    } catch (error) {
      this.logger.warn({ key: message.key, type: message.type, error: (error as Error).message }, 'a live relay message could not be published');
    }
  }
}

function topicOf(workspaceId: string): string {
  return `live-relay:${workspaceId}`;
}
