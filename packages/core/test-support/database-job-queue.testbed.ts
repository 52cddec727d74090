import type { Database, Doc, Migration, Query, Where, WriteOp } from '../src/ports/database';
import type { JobQueue } from '../src/ports/job-queue';
import type { Logger } from '../src/ports/logger';
import { CONTRACT_NOTES, type JobQueueTestBed } from '../src/adapters/job-queue.contract';
import { SystemClock } from '../src/adapters/node/system-clock';
import { UuidV7Generator } from '../src/adapters/node/uuid-v7-generator';
import { DatabaseJobQueue, jobMigrations } from '../src/adapters/queue/database-job-queue';

/** One shared store for the queues of a test bed; each queue gets its own handle on it. */
export interface SharedStore {
  /**
   * A handle on the store, as another process would open it; the test bed closes each one it gets.
   * An in-process store hands out handles whose `close` leaves the store open for the others.
   */
  connect(): Promise<Database>;
  /** Closes what is still open and removes the store. */
  cleanup(): Promise<void>;
}

const quietLogger: Logger = { info() {}, warn() {}, error() {} };

const contractMigrations: Migration[] = [
  ...jobMigrations,
  { id: 'job-contract/001-notes', steps: [{ createCollection: CONTRACT_NOTES, fields: { state: 'text' } }] },
];

/** Builds the contract's test bed for `DatabaseJobQueue` over any store. */
export async function databaseJobQueueTestBed(store: SharedStore): Promise<JobQueueTestBed> {
  const queues = new Map<JobQueue, SeverableDatabase>();
  return {
    async createQueue(options = {}) {
      // Each instance migrates at start, as createRunloom does; the first one creates the jobs.
      const database = new SeverableDatabase(await store.connect());
      await database.migrate(contractMigrations);
      const queue = new DatabaseJobQueue({
        database,
        clock: new SystemClock(),
        ids: new UuidV7Generator(),
        logger: quietLogger,
        leaseMs: options.leaseMs ?? 5000,
        pollIntervalMs: options.pollIntervalMs ?? 50,
      });
      queues.set(queue, database);
      await queue.start();
      return queue;
    },
    async readNote(id) {
      const [database] = queues.values();
      if (!database) throw new Error('no queue of this test bed has opened the store');
      return database.get(CONTRACT_NOTES, id);
    },
    crash(queue) {
      const database = queues.get(queue);
      if (!database) throw new Error('not a queue of this test bed');
      database.sever();
    },
    async cleanup() {
      for (const [queue, database] of queues) {
        await queue.stop(0);
        await database.close();
      }
      await store.cleanup();
    },
  };
}

/**
 * A handle that can lose its connection for good, as the store sees a process that died: every
 * call after `sever()` fails.
 */
class SeverableDatabase implements Database {
  private severed = false;

  constructor(private readonly inner: Database) {}

  get capabilities(): Database['capabilities'] {
    return this.inner.capabilities;
  }

  sever(): void {
    this.severed = true;
  }

  migrate(migrations: readonly Migration[]): Promise<void> {
    return this.call(() => this.inner.migrate(migrations));
  }
  get(collection: string, id: string): Promise<Doc | undefined> {
    return this.call(() => this.inner.get(collection, id));
  }
  find(collection: string, query?: Query): Promise<Doc[]> {
    return this.call(() => this.inner.find(collection, query));
  }
  count(collection: string, where?: Where): Promise<number> {
    return this.call(() => this.inner.count(collection, where));
  }
  write(ops: readonly WriteOp[]): Promise<void> {
    return this.call(() => this.inner.write(ops));
  }
  close(): Promise<void> {
    return this.inner.close();
  }

  private call<T>(operation: () => Promise<T>): Promise<T> {
    return this.severed ? Promise.reject(new Error('connection lost')) : operation();
  }
}
