import type { Database, Doc, LivenessHold, Migration, Query, Where, WriteOp, WriteOptions } from '../src/ports/database';
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
  const severed = (queue: JobQueue): SeverableDatabase => {
    const database = queues.get(queue);
    if (!database) throw new Error('not a queue of this test bed');
    return database;
  };
  return {
    async createQueue(options = {}) {
      // Each instance migrates at start, as createRunloom does; the first one creates the jobs.
      const database = new SeverableDatabase(await store.connect());
      await database.migrate(contractMigrations);
      const queue = new DatabaseJobQueue({
        database,
        clock: options.clock ?? new SystemClock(),
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
      severed(queue).sever({ keepLiveness: false });
    },
    hang(queue) {
      severed(queue).sever({ keepLiveness: true });
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
 * A handle that can lose its connection for good: every call after `sever()` fails. Its liveness
 * holds end too (a process that died), unless kept (a process stuck or cut off from the store).
 */
class SeverableDatabase implements Database {
  private severed = false;
  private readonly holds = new Set<LivenessHold>();

  constructor(private readonly inner: Database) {}

  sever(options: { keepLiveness: boolean }): void {
    this.severed = true;
    if (options.keepLiveness) return;
    for (const hold of this.holds) void hold.release();
    this.holds.clear();
  }

  async holdLiveness(holder: string, onLost: (error: Error) => void): Promise<LivenessHold> {
    const hold = await this.call(() => this.inner.holdLiveness(holder, onLost));
    this.holds.add(hold);
    return {
      holder,
      release: async () => {
        this.holds.delete(hold);
        await hold.release();
      },
    };
  }
  liveHolders(holders: readonly string[]): Promise<Set<string>> {
    return this.call(() => this.inner.liveHolders(holders));
  }
  withLock<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.call(() => this.inner.withLock(key, task));
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
  get shared(): boolean {
    return this.inner.shared;
  }
  collectionVersion(collection: string): number | undefined {
    return this.severed ? undefined : this.inner.collectionVersion(collection);
  }
  write(ops: readonly WriteOp[], options?: WriteOptions): Promise<void> {
    return this.call(() => this.inner.write(ops, options));
  }
  async close(): Promise<void> {
    for (const hold of this.holds) await hold.release();
    this.holds.clear();
    await this.inner.close();
  }

  private call<T>(operation: () => Promise<T>): Promise<T> {
    return this.severed ? Promise.reject(new Error('connection lost')) : operation();
  }
}
