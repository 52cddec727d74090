import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
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
import type { Logger } from '../../ports/logger';
import { SerialByKey } from '../serial-by-key';
import { CollectionVersions } from '../memory/collection-versions';
import { InProcessLiveness } from '../memory/in-process-liveness';
import { OperationLog } from './operation-log';
import { readSnapshot, removeSnapshotTemp } from './snapshot-file';
import { Snapshotter } from './snapshotter';
import { locateSqlWasm, type LoggedStatement, SqlEngine, type SqlParam, type StatementParam } from './sql-engine';
import {
  type CollectionSchema,
  CREATE_MIGRATIONS_TABLE,
  indexUpgradeStatements,
  INSERT_MIGRATION,
  loadSchema,
  SELECT_MIGRATION_IDS,
  migrationStatements,
} from './sql-schema';
import { FRESH_STORE_TEMPLATES, type MigrationPlan, planFreshStore, readFreshStoreTemplate } from './fresh-store-template';

export interface SqlJsDatabaseOptions {
  /** Folder of the store's files (snapshot, log segments, lock); created when missing. */
  dir: string;
  logger?: Logger;
  /** A log segment is closed, and a snapshot taken, once it holds this many bytes. */
  segmentBytes?: number;
  /** close() writes a final snapshot when a replica is up and the database is at most this big. */
  closeSnapshotMaxBytes?: number;
  /** Where a fresh store looks for the template of its migrations (`fresh-store-template.ts`); by default beside the bundle. */
  freshStoreTemplates?: string;
}

const DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024;
const DEFAULT_CLOSE_SNAPSHOT_MAX_BYTES = 64 * 1024 * 1024;

const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/**
 * The embedded store: sql.js in memory, made durable by an operation log.
 *
 * A write runs synchronously and atomically in SQLite (a savepoint in the transaction its turn of
 * the event loop shares), so no reader ever sees part of it; its statements then go to the log as
 * one checksummed record, and it resolves once that record is fdatasync'd, sharing the sync with
 * every write of the same turn. Readers may see a write a moment before it is durable; the log
 * keeps apply order, so any write acknowledged after it makes it durable too. A worker thread keeps
 * a replica fed with the same records and writes it out as the snapshot whenever a log segment
 * fills, after which the covered segments are deleted. Opening loads the snapshot and replays the
 * log after it.
 */
export class SqlJsDatabase implements Database {
  private schema: Map<string, CollectionSchema>;
  private closing: Promise<void> | undefined;
  /** The store is this process's alone (its directory lock), so liveness is this process's holds. */
  private readonly liveness = new InProcessLiveness();
  /** Likewise its locks: no other process opens this store. */
  private readonly locks = new SerialByKey();
  /** Likewise every write goes through `write`, which counts it here (`collectionVersion`). */
  private readonly versions = new CollectionVersions();

  constructor(
    private readonly engine: SqlEngine,
    private readonly log: OperationLog,
    private readonly snapshotter: Snapshotter,
    private readonly logger: Logger,
    private readonly closeSnapshotMaxBytes: number,
    private readonly releaseLock: () => void,
    /** Where `migrate` looks for the template of a fresh store (`fresh-store-template.ts`). */
    private readonly freshStoreTemplates: string,
    /**
     * Opened with no snapshot and nothing to replay, so empty: no collection, no table of applied
     * migrations. Read nothing from it, so that its database stays unopened until `migrate`
     * replaces it with its template's image (see `SqlEngine`). False once `migrate` has run.
     */
    private fresh: boolean,
  ) {
    this.schema = fresh ? new Map() : loadSchema(engine);
  }

  async migrate(migrations: readonly Migration[]): Promise<void> {
    this.assertWritable();
    const durable: Promise<void>[] = [];
    // A fresh store has no table of applied migrations yet and no index to upgrade (see `openSqlJsDatabase`).
    const fresh = this.fresh;
    this.fresh = false;
    const indexUpgrade = fresh ? [] : indexUpgradeStatements(this.engine);
    if (indexUpgrade.length > 0) {
      this.engine.transaction(() => indexUpgrade.forEach(([sql, params]) => this.engine.run(sql, params)));
      durable.push(this.log.append(indexUpgrade));
    }
    const fromTemplate = fresh ? this.migrateFromTemplate(migrations) : undefined;
    if (fromTemplate) durable.push(...fromTemplate);
    else {
      if (fresh) this.engine.run(CREATE_MIGRATIONS_TABLE);
      const applied = new Set(this.engine.all(SELECT_MIGRATION_IDS).map(([id]) => id as string));
      for (const migration of migrations) {
        if (applied.has(migration.id)) continue;
        let statements: LoggedStatement[];
        try {
          const planned = migrationStatements(migration, this.schema);
          statements = [...planned.statements, [INSERT_MIGRATION, [migration.id, new Date().toISOString()]]];
          this.engine.transaction(() => statements.forEach(([sql, params]) => this.engine.run(sql, params)));
          // After the commit: a migration that fails leaves the schema as the rollback left the tables.
          this.schema = planned.schema;
        } catch (error) {
          throw new Error(`migration ${migration.id} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        }
        applied.add(migration.id);
        durable.push(this.log.append(statements));
      }
    }
    await Promise.all(durable);
  }

  /**
   * On a fresh store, applies `migrations` by loading their template (see `fresh-store-template.ts`)
   * instead of running their statements, and logs the records that running them logs: their
   * statements and their `_migrations` row each, so a replay of the log makes the same store.
   * Undefined, having done nothing, when there is no template of them, when they do not plan (running
   * them then reports it, migration by migration) or when the template does not load (logged).
   */
  private migrateFromTemplate(migrations: readonly Migration[]): Promise<void>[] | undefined {
    let plan: MigrationPlan;
    try {
      plan = planFreshStore(migrations);
    } catch {
      return undefined;
    }
    const template = readFreshStoreTemplate(this.freshStoreTemplates, plan);
    if (!template) return undefined;
    const records = plan.migrations.map(({ id, statements }): LoggedStatement[] => [...statements, [INSERT_MIGRATION, [id, new Date().toISOString()]]]);
    try {
      this.engine.replaceImage(template.image);
      this.engine.transaction(() => records.forEach((record) => this.engine.run(...record.at(-1)!)));
    } catch (error) {
      this.engine.replaceImage();
      this.logger.warn({ file: template.file, error: String(error) }, 'the fresh store template does not load: running the migrations instead');
      return undefined;
    }
    this.schema = plan.schema;
    return records.map((record) => this.log.append(record));
  }

  async get(collection: string, id: string): Promise<Doc | undefined> {
    const [row] = this.engine.all(this.collection(collection).getSql, [id]);
    return row === undefined ? undefined : (JSON.parse(row[0] as string) as Doc);
  }

  async find(collection: string, query?: Query): Promise<Doc[]> {
    const params: SqlParam[] = [];
    const sql = this.collection(collection).selectSql(query, params);
    return this.engine.all(sql, params).map(([doc]) => JSON.parse(doc as string) as Doc);
  }

  async count(collection: string, where?: Where): Promise<number> {
    const params: SqlParam[] = [];
    const sql = this.collection(collection).countSql(where, params);
    return this.engine.all(sql, params)[0]![0] as number;
  }

  /** One process opens the store (its lock file refuses a second). */
  readonly shared = false;

  collectionVersion(collection: string): number {
    return this.versions.of(collection);
  }

  async write(ops: readonly WriteOp[], options?: WriteOptions): Promise<void> {
    this.assertWritable();
    if (ops.length === 0) {
      options?.onApplied?.();
      return;
    }
    const statements = this.engine.write(() => ops.flatMap((op) => this.apply(op)), ops.length === 1);
    // Readers see the change from now on (before it is durable), so the versions move now too.
    this.versions.changed(ops);
    // Queued in the log before `onApplied` runs, so whatever it writes lands after this record.
    const durable = this.log.append(statements);
    options?.onApplied?.();
    await durable;
  }

  holdLiveness(holder: string): Promise<LivenessHold> {
    this.assertWritable();
    return this.liveness.hold(holder);
  }

  liveHolders(holders: readonly string[]): Promise<Set<string>> {
    return this.liveness.live(holders);
  }

  withLock<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.locks.run(key, task);
  }

  /** Closes the current log segment and snapshots everything written so far (tests, benchmarks, backups). */
  async snapshot(): Promise<void> {
    this.assertWritable();
    await this.log.roll();
    await this.snapshotter.snapshot();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.liveness.clear();
      await this.log.flush();
      if (
        this.snapshotter.replicaRunning &&
        !this.log.error &&
        this.log.durableSeq > this.snapshotter.lastSnapshotSeq &&
        this.engine.byteSize() <= this.closeSnapshotMaxBytes
      ) {
        try {
          await this.log.roll();
          await this.snapshotter.snapshot();
        } catch (error) {
          this.logger.warn({ error: String(error) }, 'final snapshot failed; the next open replays the log instead');
        }
      }
      await this.snapshotter.stop();
      await this.log.close();
      this.engine.close();
      this.releaseLock();
    })();
    return this.closing;
  }

  /**
   * Runs one op; throws (leaving the caller's transaction to roll back) when it cannot apply.
   * Answers what the log must replay: nothing for a check, which changes nothing.
   */
  private apply(op: WriteOp): LoggedStatement[] {
    const schema = this.collection(op.collection);
    if (op.op === 'check') {
      const checkParams: SqlParam[] = [op.id];
      const found = this.engine.all([schema.getSql, ...schema.conditions(op.expect, checkParams)].join(' AND '), checkParams);
      if (found.length === 0) throw new WriteConflictError(op.collection, op.id);
      return [];
    }
    const params: StatementParam[] = [];
    let sql: string;
    if (op.op === 'insert') {
      params.push(op.doc.id, ...schema.rowValues(op.doc));
      sql = schema.insertSql;
    } else {
      const id = op.op === 'replace' ? op.doc.id : op.id;
      if (op.op === 'replace') params.push(...schema.rowValues(op.doc));
      params.push(id);
      sql = [op.op === 'replace' ? schema.updateSql : schema.deleteSql, ...schema.conditions(op.expect, params)].join(' AND ');
    }
    if (this.engine.run(sql, params) === 0) {
      if (op.op === 'insert') throw new DuplicateIdError(op.collection, op.doc.id);
      throw new WriteConflictError(op.collection, op.op === 'replace' ? op.doc.id : op.id);
    }
    return [[sql, params]];
  }

  private collection(name: string): CollectionSchema {
    if (this.closing) throw new Error('the store is closed');
    const schema = this.schema.get(name);
    if (!schema) throw new Error(`unknown collection ${name}: no migration creates it`);
    return schema;
  }

  private assertWritable(): void {
    if (this.closing) throw new Error('the store is closed');
    if (this.log.error) throw this.log.error;
  }
}

/**
 * Opens (or creates) the store in `options.dir`: loads the snapshot, replays the log after it,
 * cutting off a torn tail, and takes the directory's lock.
 */
export async function openSqlJsDatabase(options: SqlJsDatabaseOptions): Promise<SqlJsDatabase> {
  const dir = path.resolve(options.dir);
  const logger = options.logger ?? silentLogger;
  mkdirSync(dir, { recursive: true });
  const releaseLock = lockStore(dir);
  let engine: SqlEngine | undefined;
  try {
    removeSnapshotTemp(dir);
    const snapshot = readSnapshot(dir);
    const wasmPath = locateSqlWasm();
    const opened = await SqlEngine.open(wasmPath, snapshot?.image);
    engine = opened;
    // The table of applied migrations, before anything that may fill it; a fresh store (no snapshot,
    // nothing to replay) gets it from `migrate`, with its template's image if there is one: the
    // CREATE, the only schema change such a start would make, cost it SQLite's compiling of them.
    const createMigrationsTable = (): void => void opened.run(CREATE_MIGRATIONS_TABLE);
    if (snapshot) createMigrationsTable();
    const snapshotSeq = snapshot?.seq ?? 0;
    const { log, replayed } = await OperationLog.open({
      dir,
      snapshotSeq,
      segmentBytes: options.segmentBytes ?? DEFAULT_SEGMENT_BYTES,
      logger,
      apply: (payloads) => {
        if (payloads.length > 0) createMigrationsTable();
        opened.applyRecords(payloads);
      },
    });
    logger.info({ dir, snapshotSeq, replayed }, 'opened the sql.js store');
    const snapshotter = new Snapshotter({ dir, wasmPath, logger }, log, snapshotSeq);
    const closeSnapshotMaxBytes = options.closeSnapshotMaxBytes ?? DEFAULT_CLOSE_SNAPSHOT_MAX_BYTES;
    const fresh = !snapshot && replayed === 0;
    return new SqlJsDatabase(opened, log, snapshotter, logger, closeSnapshotMaxBytes, releaseLock, options.freshStoreTemplates ?? FRESH_STORE_TEMPLATES, fresh);
  } catch (error) {
    engine?.close();
    releaseLock();
    throw error;
  }
}

const openStores = new Set<string>();

/**
 * The store's folder is held: by another live process (`pid`, e.g. a running server), or already
 * open in this one (`pid` is this process's).
 */
export class StoreLockedError extends Error {
  override readonly name = 'StoreLockedError';

  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(pid === process.pid ? `the store in ${dir} is already open in this process` : `the store in ${dir} is open in process ${pid}`);
  }
}

/**
 * One process at a time owns a store: a second writer would interleave its log with ours. The
 * lock file names the owner's pid; a lock left by a process that is gone (kill -9) is taken over.
 */
function lockStore(dir: string): () => void {
  if (openStores.has(dir)) throw new StoreLockedError(dir, process.pid);
  const lockFile = path.join(dir, 'LOCK');
  try {
    writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const holder = Number(readFileSync(lockFile, 'utf8'));
    if (holder !== process.pid && processExists(holder)) throw new StoreLockedError(dir, holder);
    writeFileSync(lockFile, String(process.pid));
  }
  openStores.add(dir);
  return () => {
    openStores.delete(dir);
    rmSync(lockFile, { force: true });
  };
}

function processExists(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
