import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import type { Database } from '../ports/database';
import type { BusEvent } from '../ports/event-bus';
import { createTestSchema } from '../../test-support/postgres-test-store';
import { BUS_EVENTS_COLLECTION, DatabaseEventBus, eventBusMigrations } from './database-event-bus';
import { describeEventBusContract, type EventBusTestBed } from './event-bus.contract';
import { MemoryDatabase } from './memory/memory-database';
import { openSqlJsDatabase } from './sqljs/sqljs-database';

async function migrated(database: Database): Promise<Database> {
  await database.migrate(eventBusMigrations);
  return database;
}

/**
 * Buses on a store that `open` opens (again on `reopen`, as a restarted process would); `another`
 * is a second bus beside the first: its own numbering cache and subscribers, the same store.
 */
async function testBed(
  backlogPerTopic: number,
  store: { open(): Promise<Database>; shareHandle: boolean; cleanup(): Promise<void> },
): Promise<EventBusTestBed> {
  let database = await migrated(await store.open());
  const databases = [database];
  const busOn = (on: Database) => new DatabaseEventBus({ database: on, backlogPerTopic });
  let bus = busOn(database);
  return {
    bus,
    async reopen() {
      await bus.close();
      if (!store.shareHandle) {
        await database.close();
        databases.splice(databases.indexOf(database), 1);
        database = await migrated(await store.open());
        databases.push(database);
      }
      bus = busOn(database);
      return bus;
    },
    async another() {
      const handle = store.shareHandle ? database : await migrated(await store.open());
      databases.push(handle);
      return busOn(handle);
    },
    async cleanup() {
      for (const handle of new Set(databases)) await handle.close();
      await store.cleanup();
    },
  };
}

describeEventBusContract('DatabaseEventBus on MemoryDatabase', ({ backlogPerTopic }) => {
  const database = new MemoryDatabase();
  return testBed(backlogPerTopic, { open: async () => database, shareHandle: true, cleanup: async () => {} });
});

describeEventBusContract('DatabaseEventBus on SqlJsDatabase (reopened from its files)', ({ backlogPerTopic }) => {
  const dir = mkdtempSync(`${os.tmpdir()}/runloom-bus-`);
  // One process holds the data dir: a second instance shares the handle, a restart reopens the files.
  let handle: Database | undefined;
  return testBed(backlogPerTopic, {
    open: async () => (handle = await openSqlJsDatabase({ dir })),
    shareHandle: false,
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  }).then((bed) => ({
    ...bed,
    another: async () => new DatabaseEventBus({ database: handle!, backlogPerTopic }),
  }));
});

describeEventBusContract('DatabaseEventBus on PostgresDatabase (a connection pool per instance)', ({ backlogPerTopic }) => {
  const schema = createTestSchema();
  return testBed(backlogPerTopic, { open: () => schema.open(), shareHandle: false, cleanup: () => schema.drop() });
});

describe('DatabaseEventBus', () => {
  let database: MemoryDatabase;
  const buses: DatabaseEventBus[] = [];
  const open = (backlogPerTopic = 5): DatabaseEventBus => {
    const bus = new DatabaseEventBus({ database, backlogPerTopic });
    buses.push(bus);
    return bus;
  };
  beforeEach(async () => {
    database = new MemoryDatabase();
    await database.migrate(eventBusMigrations);
  });
  afterEach(async () => {
    for (const bus of buses.splice(0)) await bus.close();
    await database.close();
  });

  it('hands its subscribers the events another instance published before its own next one, in order', async () => {
    const here = open();
    const elsewhere = open();
    const seen: BusEvent<string>[] = [];
    here.subscribe<string>('t', (event) => seen.push(event));
    await here.publish('t', 'one');
    await elsewhere.publish('t', 'two');
    await elsewhere.publish('t', 'three');
    const own = await here.publish('t', 'four');
    assert.equal(own.seq, 4, 'numbered after the events stored by the other instance');
    assert.deepEqual(
      seen.map((event) => [event.seq, event.data]),
      [[1, 'one'], [2, 'two'], [3, 'three'], [4, 'four']],
    );
  });

  it('hands a subscriber that starts at the head every event published after, however far the backlog was trimmed before it read the store', async () => {
    const bus = open(1);
    // Holds the subscriber's read of the stored events after the head (the first read without a
    // limit) until the events published meanwhile are stored, delivered and trimmed to the newest.
    const find = database.find.bind(database);
    let releaseRead!: () => void;
    const readReleased = new Promise<void>((resolve) => (releaseRead = resolve));
    let holdRead = true;
    database.find = async (collection, query) => {
      if (holdRead && query?.limit === undefined && query?.where && 'seq' in query.where) {
        holdRead = false;
        await readReleased;
      }
      return find(collection, query);
    };
    const seen: number[] = [];
    let sawLast!: () => void;
    const lastSeen = new Promise<void>((resolve) => (sawLast = resolve));
    bus.subscribe<number>('t', (event) => {
      seen.push(event.seq);
      if (event.seq === 5) sawLast();
    });
    for (let n = 1; n <= 5; n += 1) await bus.publish('t', n);
    while ((await database.count(BUS_EVENTS_COLLECTION, { topic: 't' })) > 1) await new Promise((resolve) => setImmediate(resolve));
    releaseRead();
    await lastSeen;
    assert.deepEqual(seen, [1, 2, 3, 4, 5]);
  });

  it('keeps the store to the backlog: older events are deleted as new ones are written', async () => {
    const bus = open(10);
    for (let n = 1; n <= 30; n += 1) await bus.publish('t', n);
    await bus.publish('other', 'kept');
    // close() waits for the trims in flight.
    await bus.close();
    const stored = await database.find(BUS_EVENTS_COLLECTION, { where: { topic: 't' }, orderBy: [{ field: 'seq' }] });
    assert.deepEqual(stored.map((doc) => doc.seq), Array.from({ length: 10 }, (_, n) => 21 + n));
    assert.equal(await database.count(BUS_EVENTS_COLLECTION, { topic: 'other' }), 1);
  });

  it('stores a burst of publishes in few writes, each publish resolved once its event is durable', async () => {
    let writes = 0;
    const counting: Database = Object.assign(Object.create(database) as Database, {
      write: (ops: Parameters<Database['write']>[0]) => {
        writes += 1;
        return database.write(ops);
      },
    });
    const bus = new DatabaseEventBus({ database: counting, backlogPerTopic: 1000 });
    buses.push(bus);
    const published = await Promise.all(Array.from({ length: 100 }, (_, n) => bus.publish('t', n)));
    assert.deepEqual(published.map((event) => event.seq), Array.from({ length: 100 }, (_, n) => n + 1));
    assert.ok(writes <= 2, `100 concurrent publishes took ${writes} writes`);
    assert.equal(await database.count(BUS_EVENTS_COLLECTION, { topic: 't' }), 100);
  });

  it('gives a subscriber whose `after` the numbering never reached (a store restored from a backup) the events from the newest stored one on', async () => {
    const bus = open();
    for (const n of [1, 2, 3]) await bus.publish('t', n);
    const seen: number[] = [];
    let received!: () => void;
    const first = new Promise<void>((resolve) => (received = resolve));
    bus.subscribe<number>('t', (event) => {
      seen.push(event.seq);
      received();
    }, { after: 40 });
    await bus.publish('t', 4);
    await first;
    assert.deepEqual(seen, [4], 'nothing replayed, and the next event not skipped');
  });

  it('refuses a backlog that cannot carry the numbering', () => {
    assert.throws(() => new DatabaseEventBus({ database, backlogPerTopic: 0 }), /backlogPerTopic/);
  });
});
