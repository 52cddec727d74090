import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Clock, Timer } from '../../ports/clock';
import type { BusEvent } from '../../ports/event-bus';
import { DatabaseEventBus, type DatabaseEventBusOptions } from '../database-event-bus';
import type { PostgresDatabase } from './postgres-database';

/** NOTIFY refuses a payload of 8000 bytes or more (the server's default); a notice stays below. */
const MAX_NOTICE_BYTES = 7999;
/** Notices sent in one statement at most. */
const MAX_NOTICES_PER_STATEMENT = 100;
/** Waits before listening again after the connection was lost: doubling from the first to the last. */
const RECONNECT_MS = { first: 100, last: 10_000 };

export interface PostgresEventBusOptions extends Omit<DatabaseEventBusOptions, 'database'> {
  database: PostgresDatabase;
  /** Times the reconnection of a lost listening connection. */
  clock: Clock;
}

/**
 * A notice, the NOTIFY payload: `[topic, first, count, data]` (the events `first` … `first + count - 1`
 * of `topic`), `[topic, first, count]` when their data would not fit (the receiver reads them from
 * the table), or `[]`, "read everything you may have missed" (a topic name too long, or notices lost
 * while the connection was down).
 */
type Notice = [] | [topic: string, first: number, count: number, data?: unknown[]];

/**
 * The `DurableEventBus` for instances sharing a PostgreSQL database: `DatabaseEventBus` (the table
 * `bus_events` numbers each topic across instances, keeps the backlog for ordering and
 * `Last-Event-ID` replay) plus LISTEN/NOTIFY, so a subscriber on any instance receives every event
 * live, in order, with the number it was stored under.
 *
 * - One connection of its own per bus (outside the pool) LISTENs on a channel of the schema
 *   (`runloom_events_<hash>`) and sends this bus's notices, so they go out in the order the batches
 *   were stored, several in one statement when they queue up. A notice goes after its batch is
 *   committed, so whoever hears it can read the batch.
 * - A notice carries its events' data when it fits in a NOTIFY payload; otherwise the receiver reads
 *   them from the table. Either way the base class hands subscribers the stored events they missed
 *   first, so notices arriving late, reordered or not at all leave no hole.
 * - Only topics with a subscriber here cost anything on receipt; a bus ignores its own notices
 *   (it delivered its events when storing them).
 * - A lost connection is opened again (waits doubling up to 10 s); then every subscribed topic is
 *   read from the table and the other instances are told to do the same.
 */
export class PostgresEventBus extends DatabaseEventBus {
  private readonly postgres: PostgresDatabase;
  private readonly clock: Clock;
  private readonly channel: string;
  private client: pg.Client | undefined;
  private outbox: string[] = [];
  private sending: Promise<void> | undefined;
  private reconnection: Timer | undefined;
  private reconnectMs = RECONNECT_MS.first;
  private stopped = false;

  /** A bus listening on its channel; throws when PostgreSQL cannot be reached. */
  static async open(options: PostgresEventBusOptions): Promise<PostgresEventBus> {
    const bus = new PostgresEventBus(options);
    await bus.listen();
    return bus;
  }

  private constructor(options: PostgresEventBusOptions) {
    super(options);
    this.postgres = options.database;
    this.clock = options.clock;
    this.channel = `runloom_events_${createHash('sha256').update(options.database.schema).digest('hex').slice(0, 24)}`;
  }

  override async close(): Promise<void> {
    this.stopped = true;
    this.reconnection?.cancel();
    // Publishes already accepted are stored and announced before the connection goes.
    await super.close();
    await this.sending;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  protected override stored(topic: string, events: readonly BusEvent<unknown>[]): void {
    this.announce(noticeOf(topic, events));
  }

  private announce(notice: string): void {
    this.outbox.push(notice);
    this.sending ??= this.send();
  }

  private async send(): Promise<void> {
    try {
      while (this.outbox.length > 0) {
        const notices = this.outbox.splice(0, MAX_NOTICES_PER_STATEMENT);
        // While the connection is down notices are dropped; once it is back a "read everything" replaces them.
        const client = this.client;
        if (!client) continue;
        const calls = notices.map((_, index) => `pg_notify($1, $${index + 2})`).join(', ');
        try {
          await client.query(`SELECT ${calls}`, [this.channel, ...notices]);
        } catch (error) {
          this.logger?.warn({ error: (error as Error).message }, 'notifying other instances of new events failed');
        }
      }
    } finally {
      this.sending = undefined;
    }
  }

  private async listen(): Promise<void> {
    const client = this.postgres.newClient();
    let session: number | undefined;
    client.on('notification', (message) => {
      // Its own notices: this bus delivered those events when it stored them.
      if (message.processId !== session && message.payload !== undefined) this.heard(message.payload);
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('the connection closed')));
    try {
      await client.connect();
      const result = await client.query<{ pid: number }>(`LISTEN "${this.channel}"; SELECT pg_backend_pid() AS "pid"`);
      session = (result as unknown as pg.QueryResult<{ pid: number }>[])[1]!.rows[0]!.pid;
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.client = client;
  }

  private heard(payload: string): void {
    let notice: Notice;
    try {
      notice = JSON.parse(payload) as Notice;
    } catch {
      return;
    }
    if (notice.length === 0) return this.catchUp();
    const [topic, first, count, data] = notice;
    const events = data?.length === count ? data.map((item, index) => ({ topic, seq: first + index, data: item })) : undefined;
    this.wake(topic, first, events);
  }

  /** Every subscribed topic from the last event each subscriber saw, read from the table. */
  private catchUp(): void {
    for (const topic of this.subscribedTopics()) this.wake(topic, Number.POSITIVE_INFINITY);
  }

  private lost(client: pg.Client, error: Error): void {
    if (client !== this.client || this.stopped) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
    this.logger?.warn({ error: error.message }, 'the PostgreSQL connection listening for events was lost; listening again');
    this.reconnectLater();
  }

  private reconnectLater(): void {
    const wait = this.reconnectMs;
    this.reconnectMs = Math.min(this.reconnectMs * 2, RECONNECT_MS.last);
    this.reconnection = this.clock.setTimeout(() => {
      this.reconnection = undefined;
      if (this.stopped) return;
      this.listen().then(
        () => {
          this.reconnectMs = RECONNECT_MS.first;
          // What either side may have missed meanwhile: read here, and tell the others to read.
          this.catchUp();
          this.announce('[]');
        },
        (error: unknown) => {
          this.logger?.warn({ error: (error as Error).message }, 'listening for events again failed; retrying');
          this.reconnectLater();
        },
      );
    }, wait);
  }
}

/** The notice of a stored batch: with the data when it fits (and every event has some). */
function noticeOf(topic: string, events: readonly BusEvent<unknown>[]): string {
  const first = events[0]!.seq;
  if (events.every((event) => event.data !== undefined)) {
    const full = JSON.stringify([topic, first, events.length, events.map((event) => event.data)]);
    if (Buffer.byteLength(full) <= MAX_NOTICE_BYTES) return full;
  }
  const bare = JSON.stringify([topic, first, events.length]);
  return Buffer.byteLength(bare) <= MAX_NOTICE_BYTES ? bare : '[]';
}
