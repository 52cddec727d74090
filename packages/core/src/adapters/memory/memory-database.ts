import {
  type Database,
  type Doc,
  DuplicateIdError,
  type LivenessHold,
  type Migration,
  type Query,
  type Where,
  type WriteOp,
  type WriteOptions,
  WriteConflictError,
} from '../../ports/database';
import { matchesWhere, runQuery } from '../../ports/database-where';
import { SerialByKey } from '../serial-by-key';
import { CollectionVersions } from './collection-versions';
import { InProcessLiveness } from './in-process-liveness';

/** Documents in memory: for tests and throwaway embedded use. Nothing survives the process. */
export class MemoryDatabase implements Database {
  private readonly collections = new Map<string, Map<string, string>>();
  private readonly appliedMigrations = new Set<string>();
  private readonly liveness = new InProcessLiveness();
  /** Nothing but this process shares these documents: in-process locks are the whole truth. */
  private readonly locks = new SerialByKey();
  private readonly versions = new CollectionVersions();

  async migrate(migrations: readonly Migration[]): Promise<void> {
    for (const migration of migrations) {
      if (this.appliedMigrations.has(migration.id)) continue;
      this.appliedMigrations.add(migration.id);
      for (const step of migration.steps) {
        if ('createCollection' in step && !this.collections.has(step.createCollection)) {
          this.collections.set(step.createCollection, new Map());
        }
      }
    }
  }

  async get(collection: string, id: string): Promise<Doc | undefined> {
    const stored = this.table(collection).get(id);
    return stored === undefined ? undefined : (JSON.parse(stored) as Doc);
  }

  async find(collection: string, query?: Query): Promise<Doc[]> {
    return runQuery(this.docs(collection), query);
  }

  async count(collection: string, where?: Where): Promise<number> {
    return this.docs(collection).filter((doc) => matchesWhere(doc, where)).length;
  }

  readonly shared = false;

  collectionVersion(collection: string): number {
    return this.versions.of(collection);
  }

  async write(ops: readonly WriteOp[], options?: WriteOptions): Promise<void> {
    // Check every op against the state the earlier ops of the batch leave, then apply all at once.
    const staged = new Map<string, Map<string, string | undefined>>();
    const current = (collection: string, id: string): string | undefined => {
      const pending = staged.get(collection);
      return pending?.has(id) ? pending.get(id) : this.table(collection).get(id);
    };
    const stage = (collection: string, id: string, value: string | undefined): void => {
      const pending = staged.get(collection) ?? new Map<string, string | undefined>();
      pending.set(id, value);
      staged.set(collection, pending);
    };
    for (const op of ops) {
      const id = op.op === 'delete' || op.op === 'check' ? op.id : op.doc.id;
      const existing = current(op.collection, id);
      if (op.op === 'insert') {
        if (existing !== undefined) throw new DuplicateIdError(op.collection, id);
        stage(op.collection, id, JSON.stringify(op.doc));
        continue;
      }
      if (existing === undefined || !matchesWhere(JSON.parse(existing) as Doc, op.expect)) {
        throw new WriteConflictError(op.collection, id);
      }
      if (op.op === 'check') continue;
      stage(op.collection, id, op.op === 'replace' ? JSON.stringify(op.doc) : undefined);
    }
    for (const [collection, pending] of staged) {
      const table = this.table(collection);
      for (const [id, value] of pending) {
        if (value === undefined) table.delete(id);
        else table.set(id, value);
      }
    }
    this.versions.changed(ops);
    options?.onApplied?.();
  }

  holdLiveness(holder: string): Promise<LivenessHold> {
    return this.liveness.hold(holder);
  }

  liveHolders(holders: readonly string[]): Promise<Set<string>> {
    return this.liveness.live(holders);
  }

  withLock<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.locks.run(key, task);
  }

  async close(): Promise<void> {
    this.liveness.clear();
  }

  private table(collection: string): Map<string, string> {
    const table = this.collections.get(collection);
    if (!table) throw new Error(`unknown collection ${collection}: no migration creates it`);
    return table;
  }

  private docs(collection: string): Doc[] {
    return [...this.table(collection).values()].map((stored) => JSON.parse(stored) as Doc);
  }
}
