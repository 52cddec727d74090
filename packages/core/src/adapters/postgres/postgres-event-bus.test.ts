import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { BusEvent } from '../../ports/event-bus';
import { createTestSchema, TEST_DATABASE_URL } from '../../../test-support/postgres-test-store';
import { eventBusMigrations } from '../database-event-bus';
import { describeEventBusContract } from '../event-bus.contract';
import { SystemClock } from '../node/system-clock';
import type { PostgresDatabase } from './postgres-database';
import { PostgresEventBus } from './postgres-event-bus';

/** A bus on its own connection pool to the schema, as each instance of a deployment has. */
async function openBus(open: () => Promise<PostgresDatabase>, backlogPerTopic: number): Promise<{ bus: PostgresEventBus; database: PostgresDatabase }> {
  const database = await open();
  await database.migrate(eventBusMigrations);
  return { bus: await PostgresEventBus.open({ database, clock: new SystemClock(), backlogPerTopic }), database };
}

describeEventBusContract('PostgresEventBus (LISTEN/NOTIFY, a connection pool per instance)', async ({ backlogPerTopic }) => {
  const schema = createTestSchema();
  const opened: { bus: PostgresEventBus; database: PostgresDatabase }[] = [];
  const open = async () => {
    const instance = await openBus(() => schema.open(), backlogPerTopic);
    opened.push(instance);
    return instance.bus;
  };
  return {
    bus: await open(),
    liveAcrossInstances: true,
    // A restart: the bus closes (its listening session with it), a new instance opens on the same schema.
    async reopen() {
      await opened.at(-1)!.bus.close();
      return open();
    },
    another: open,
    async cleanup() {
      for (const { bus, database } of opened) {
        await bus.close();
        await database.close();
      }
      await schema.drop();
    },
  };
});

/** The application name of the listening session the reconnection test cuts. */
const LISTENER_NAME = `runloom_listener_${randomBytes(4).toString('hex')}`;

describe('PostgresEventBus', function () {
  this.timeout(20_000);
  const schema = createTestSchema();
  const opened: { bus: PostgresEventBus; database: PostgresDatabase }[] = [];
  const open = async () => {
    const instance = await openBus(() => schema.open(), 1000);
    opened.push(instance);
    return instance.bus;
  };
  afterEach(async () => {
    for (const { bus, database } of opened.splice(0)) {
      await bus.close();
      await database.close();
    }
    await schema.drop();
  });

  it('listens again after its connection is cut, and hands over what was published meanwhile, in order', async () => {
    const publisher = await open();
    // The listening bus's sessions carry a name of their own, so the test cuts only them.
    const database = await schema.open();
    const sessions: pg.Client[] = [];
    const watched = Object.assign(Object.create(database) as PostgresDatabase, {
      newClient: () => {
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL, application_name: LISTENER_NAME });
        sessions.push(client);
        return client;
      },
    });
    const listener = await PostgresEventBus.open({ database: watched, clock: new SystemClock() });
    opened.push({ bus: listener, database });
    const seen: BusEvent<number>[] = [];
    listener.subscribe<number>('t', (event) => seen.push(event));
    await publisher.publish('t', 1);
    await until(() => seen.length === 1);
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      const listening = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [LISTENER_NAME]);
      assert.equal(listening.rows.length, 1);
      await admin.query('SELECT pg_terminate_backend($1)', [listening.rows[0]!.pid]);
    } finally {
      await admin.end();
    }
    for (const n of [2, 3, 4]) await publisher.publish('t', n);
    await until(() => seen.length === 4);
    assert.ok(sessions.length >= 2, 'a new session listens');
    await publisher.publish('t', 5);
    await until(() => seen.length === 5);
    assert.deepEqual(seen.map((event) => [event.seq, event.data]), [[1, 1], [2, 2], [3, 3], [4, 4], [5, 5]]);
  });

  it('refuses to open when PostgreSQL cannot be reached', async () => {
    const database = await schema.open();
    try {
      const unreachable = Object.assign(Object.create(database) as PostgresDatabase, {
        newClient: () => new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMillis: 2000 }),
      });
      await assert.rejects(PostgresEventBus.open({ database: unreachable, clock: new SystemClock() }), /ECONNREFUSED|connect/);
    } finally {
      await database.close();
    }
  });
});

/** Resolves once `condition` holds; fails the test after 5 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
