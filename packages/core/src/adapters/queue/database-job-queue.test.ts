import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { describeJobQueueContract } from '../job-queue.contract';
import { MemoryDatabase } from '../memory/memory-database';
import { SystemClock } from '../node/system-clock';
import { ManualClock } from '../../testing/manual-clock';
import { UuidV7Generator } from '../node/uuid-v7-generator';
import { openSqlJsDatabase } from '../sqljs/sqljs-database';
import type { Database } from '../../ports/database';
import type { Logger } from '../../ports/logger';
import { DatabaseJobQueue, JOBS_COLLECTION, jobMigrations, retryDelayMs } from './database-job-queue';
import { databaseJobQueueTestBed, type SharedStore } from '../../../test-support/database-job-queue.testbed';

/**
 * An in-process store shared by every queue of a test, as one process's queues would share it;
 * their handles leave it open and cleanup closes it.
 */
function inProcessStore(database: Database, removeFiles: () => void = () => {}): SharedStore {
  const handle: Database = {
    migrate: (migrations) => database.migrate(migrations),
    get: (collection, id) => database.get(collection, id),
    find: (collection, query) => database.find(collection, query),
    count: (collection, where) => database.count(collection, where),
    shared: database.shared,
    collectionVersion: (collection) => database.collectionVersion(collection),
    write: (ops, options) => database.write(ops, options),
    holdLiveness: (holder, onLost) => database.holdLiveness(holder, onLost),
    liveHolders: (holders) => database.liveHolders(holders),
    withLock: (key, task) => database.withLock(key, task),
    // The test bed releases the handle's holds before closing it.
    close: async () => {},
  };
  return {
    connect: async () => handle,
    cleanup: async () => {
      await database.close();
      removeFiles();
    },
  };
}

describeJobQueueContract('DatabaseJobQueue on MemoryDatabase', () => databaseJobQueueTestBed(inProcessStore(new MemoryDatabase())));

describeJobQueueContract('DatabaseJobQueue on SqlJsDatabase', async () => {
  const dir = mkdtempSync(`${os.tmpdir()}/runloom-`);
  return databaseJobQueueTestBed(inProcessStore(await openSqlJsDatabase({ dir }), () => rmSync(dir, { recursive: true, force: true })));
});

describe('DatabaseJobQueue', () => {
  const quiet: Logger = { info() {}, warn() {}, error() {} };
  const queueOn = (database: Database, options: { leaseMs?: number } = {}) =>
    new DatabaseJobQueue({ database, clock: new SystemClock(), ids: new UuidV7Generator(), logger: quiet, ...options });

  it('stores and finishes a job in two writes when it runs where it was enqueued', async () => {
    const database = new MemoryDatabase();
    await database.migrate(jobMigrations);
    let writes = 0;
    const counting: Database = Object.assign(Object.create(database) as Database, {
      write: (...args: Parameters<Database['write']>) => {
        writes += 1;
        return database.write(...args);
      },
    });
    const queue = queueOn(counting);
    let ran = (): void => {};
    const hasRun = new Promise<void>((resolve) => (ran = resolve));
    queue.register('count', async () => {
      ran();
    }, { concurrency: 1 });
    await queue.start();
    await queue.enqueue('count', {});
    await hasRun;
    // Stopping waits for the attempt to end (its delete written) and writes nothing itself.
    await queue.stop(10_000);
    assert.equal(writes, 2, 'insert (already claimed) + delete');
  });

  it('claims a job at enqueue while the kind has a free slot, and says so to the ops function; the handler starts before enqueue resolves', async () => {
    const database = new MemoryDatabase();
    await database.migrate(jobMigrations);
    const queue = queueOn(database);
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const started: string[] = [];
    queue.register('one', async (payload: string) => {
      started.push(payload);
      await gate;
    }, { concurrency: 1 });
    await queue.start();
    const claimed: boolean[] = [];
    const withOps = (claimedHere: boolean) => (claimed.push(claimedHere), []);
    await queue.enqueue('one', 'first', { with: withOps });
    assert.deepEqual(started, ['first'], 'handler called by the time enqueue resolves');
    await queue.enqueue('one', 'second', { with: withOps });
    assert.deepEqual(claimed, [true, false], 'the only slot is busy: the second job waits, unclaimed');
    release();
    await queue.stop(10_000);
  });

  it('starts a job claimed at enqueue, asked to, once its insert has applied, without waiting for it to be durable', async () => {
    const database = new MemoryDatabase();
    await database.migrate(jobMigrations);
    let makeDurable = (): void => {};
    const durable = new Promise<void>((resolve) => (makeDurable = resolve));
    // A store whose writes apply at once and become durable when the test says so.
    const slowToSync: Database = Object.assign(Object.create(database) as Database, {
      write: async (...args: Parameters<Database['write']>) => {
        await database.write(...args);
        await durable;
      },
    });
    const queue = queueOn(slowToSync);
    let started = (): void => {};
    const hasStarted = new Promise<void>((resolve) => (started = resolve));
    queue.register('early', async () => started(), { concurrency: 1 });
    await queue.start();
    let enqueued = false;
    const enqueue = queue.enqueue('early', {}, { startBeforeDurable: true }).then(() => (enqueued = true));
    await hasStarted;
    assert.equal(enqueued, false, 'the handler started while the insert was not yet durable');
    makeDurable();
    await enqueue;
    await queue.stop(10_000);
    assert.equal(await database.count(JOBS_COLLECTION), 0, 'the attempt ended its job, once');
  });

  it('looks at the store in two reads per poll whatever the number of kinds, and runs what another instance enqueued', async () => {
    const database = new MemoryDatabase();
    await database.migrate(jobMigrations);
    let reads = 0;
    const counting: Database = Object.assign(Object.create(database) as Database, {
      find: (...args: Parameters<Database['find']>) => {
        reads += 1;
        return database.find(...args);
      },
    });
    const clock = new ManualClock();
    const worker = new DatabaseJobQueue({ database: counting, clock, ids: new UuidV7Generator(), logger: quiet, pollIntervalMs: 1000 });
    const ran: string[] = [];
    for (const kind of ['a', 'b', 'c', 'd', 'e', 'f']) worker.register(kind, async (payload: string) => void ran.push(`${kind}:${payload}`));
    await worker.start();
    await clock.advance(1000);
    // Another instance, without handlers of its own, enqueues for the worker.
    await queueOn(database).enqueue('d', 'from elsewhere');
    reads = 0;
    await clock.advance(1000);
    while (ran.length === 0) await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(ran, ['d:from elsewhere']);
    assert.equal(reads, 2, 'the running jobs and the due jobs of every kind');
    await worker.stop(10_000);
  });

  it('rejects a retry policy it cannot follow, and a second handler for a kind', async () => {
    const queue = queueOn(new MemoryDatabase());
    await assert.rejects(queue.enqueue('k', {}, { retry: { maxAttempts: 0, initialBackoffMs: 1 } }), /maxAttempts/);
    await assert.rejects(queue.enqueue('k', {}, { retry: { maxAttempts: 2, initialBackoffMs: 1, jitter: 2 } }), /jitter/);
    queue.register('k', async () => {});
    assert.throws(() => queue.register('k', async () => {}), /already registered/);
    assert.throws(() => queue.register('j', async () => {}, { concurrency: 0 }), /concurrency/);
  });

  it('computes backoff as initial · 2^(attempt−1), capped, within ± jitter', () => {
    assert.deepEqual([1, 2, 3, 4].map((attempt) => retryDelayMs({ maxAttempts: 9, initialBackoffMs: 100 }, attempt)), [100, 200, 400, 800]);
    assert.equal(retryDelayMs({ maxAttempts: 9, initialBackoffMs: 1000, maxBackoffMs: 600_000 }, 20), 600_000);
    for (let sample = 0; sample < 200; sample += 1) {
      const delay = retryDelayMs({ maxAttempts: 9, initialBackoffMs: 1000, jitter: 0.2 }, 1);
      assert.ok(delay >= 800 && delay <= 1200, `${delay}`);
    }
  });
});
