import type pg from 'pg';
import {
  type Condition,
  type Database,
  type Doc,
  DuplicateIdError,
  type FieldType,
  type LivenessHold,
  type Migration,
  type MigrationStep,
  type Query,
  type Where,
  type WriteOp,
  type WriteOptions,
  WriteConflictError,
} from '../../ports/database';
import type { Logger } from '../../ports/logger';
import { SerialByKey } from '../serial-by-key';
import { BatchQueue } from './batch-queue';
import { type BatchStep, batchStatement, batchSteps, type OpStatement, type Param, type PendingWrite, placeholder } from './write-batch';

export interface PostgresDatabaseOptions {
  /**
   * Schema holding every table of this store; created when missing. Default: the URL's `schema`
   * parameter (`postgres://host/db?schema=runloom`), else `public`.
   */
  schema?: string;
  /** Connections kept open at most. */
  maxConnections?: number;
  /** Told about connections that fail while idle. */
  logger?: Logger;
}

/** Collection, field and schema names become identifiers; anything else is refused rather than escaped. */
const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]*$/;

/**
 * Column type of each field type. Text compares in code point order (`COLLATE "C"`), as the
 * other adapters do; `numeric` keeps every integer exact and accepts whatever number a document holds.
 */
const COLUMN_TYPES: Record<FieldType, string> = {
  text: 'text COLLATE "C"',
  integer: 'numeric',
  real: 'double precision',
  boolean: 'boolean',
  json: 'jsonb',
};
/** information_schema `data_type` → field type, to read the declared fields back. */
const FIELD_TYPES: Record<string, FieldType> = {
  text: 'text',
  numeric: 'integer',
  'double precision': 'real',
  boolean: 'boolean',
  jsonb: 'json',
};

/** SQLSTATEs after which a whole transaction can simply run again. */
const RETRYABLE = new Set(['40001', '40P01']);
const WRITE_ATTEMPTS = 3;
/**
 * Batches committing at once. Writes that arrive meanwhile wait and share the next batch's
 * transaction (group commit): one commit, one WAL flush and a few statements for many writes,
 * where each write alone would cost a transaction of its own. One: with a second, the writes
 * split over two smaller transactions, each a round trip that wakes this process and a
 * PostgreSQL backend; with one, a write waits at most for the commit under way (as a get waits
 * for its query), and 16 clients' durable creates went faster, not slower (bench writes,
 * alternating: 3,082 → 4,531 and 4,614 → 5,735 creates/s, p99 18 → 13 and 16 → 11 ms), with
 * half the transactions per run in bench multi-instance.
 */
const BATCHES_IN_FLIGHT = 1;
/** Most writes in one batch: bounds a transaction's size and how long its first write waits. */
const MAX_BATCH_WRITES = 256;
/**
 * `get` queries under way at once. Gets asked meanwhile wait and share the next query, one round
 * trip for all of them (a record read by many requests, a runnable or a provider's settings read
 * by every run, is read once), where each alone would cost one of its own. One: with a second,
 * an instance under half the load (two sharing the work) sent most gets alone on whichever query
 * was free. A get waits at most for the query under way, and no lock holds that up (a plain
 * SELECT in PostgreSQL never waits for row locks).
 */
const GETS_IN_FLIGHT = 1;
/** Most gets answered by one query. */
const MAX_GETS_PER_QUERY = 256;
/** Sessions holding `withLock` locks at once; more callers (of other keys) wait for one. */
const LOCK_SESSIONS = 8;

/**
 * The `Database` port on PostgreSQL, for several instances sharing one database. One table per
 * collection: `id` primary key, the document as `json` in `_doc` (the exact text: key order and
 * every string survive, which `jsonb` would not promise), and one indexed column per declared field.
 * Writes are group-committed: those that arrive while earlier batches commit share one transaction
 * (`expect` preconditions are part of their UPDATE/DELETE statements, so concurrent writers
 * serialize on the rows they touch), and each resolves only once that transaction has committed.
 * A batch is one statement (`batchStatement`: one round trip), or a transaction of its statements
 * in order when it writes a row twice or one statement would pass the parameter limit. A write that
 * cannot apply in its batch is refused alone when it changed nothing; otherwise the batch applies
 * nothing and its writes run again one transaction each. `get`s are coalesced the same way: those
 * asked while earlier ones are under way share one query. Migrations run under an advisory lock.
 *
 * Liveness: a holder is live while a connection of its process holds a session-level advisory lock
 * on a 64-bit hash of the schema and the holder. When the process dies (even `kill -9`) the server
 * ends its session and the lock goes with it; `liveHolders` asks for the lock (shared, released
 * at the end of that statement), which only a live holder's lock refuses.
 *
 * Locks (`withLock`): a session-level advisory lock on a 64-bit hash of the schema and the key,
 * taken on a connection of a small pool of their own, so a task's own queries (from the main pool)
 * never wait behind the locks held meanwhile. Callers of one process queue per key in memory
 * first, so each key has at most one session of this process waiting in PostgreSQL. If the lock's
 * connection breaks during the task, PostgreSQL frees the lock; the pool then discards it.
 */
export class PostgresDatabase implements Database {
  private collections = new Map<string, Map<string, FieldType>>();
  /** Connections holding liveness locks, each with what ends its hold. */
  private readonly holds = new Map<pg.Client, () => Promise<void>>();
  /** Writes waiting for a batch. */
  private readonly writes = new BatchQueue<PendingWrite>(BATCHES_IN_FLIGHT, MAX_BATCH_WRITES, (batch) => this.commitBatch(batch));
  /**
   * `get`s waiting for a query. A get joins only a query not sent yet, so it sees every write that
   * resolved before it was asked.
   */
  private readonly gets = new BatchQueue<PendingGet>(GETS_IN_FLIGHT, MAX_GETS_PER_QUERY, (gets) => this.readGets(gets));
  /** This process's callers of `withLock`, queued per key. */
  private readonly lockQueues = new SerialByKey();

  constructor(
    private readonly pool: pg.Pool,
    readonly schema: string,
    /** A new connection outside the pool: a session of its own (a liveness hold, `PostgresEventBus`'s LISTEN). */
    readonly newClient: () => pg.Client,
    /** The sessions holding `withLock` locks. */
    private readonly lockPool: pg.Pool,
  ) {}

  async migrate(migrations: readonly Migration[]): Promise<void> {
    await this.transaction(async (client) => {
      // One migrator at a time per schema: instances starting together wait for each other here.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`runloom:migrate:${this.schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quote(this.schema)}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${this.table('_migrations')} ("id" text COLLATE "C" PRIMARY KEY, "applied_at" timestamptz NOT NULL DEFAULT now())`);
      const applied = new Set((await client.query<{ id: string }>(`SELECT "id" FROM ${this.table('_migrations')}`)).rows.map((row) => row.id));
      for (const migration of migrations) {
        if (applied.has(migration.id)) continue;
        for (const step of migration.steps) {
          for (const sql of this.stepStatements(step, await this.loadCollections(client))) await client.query(sql);
          if ('addField' in step) await this.backfillDocsWithNul(client, step.addField.collection, step.addField.field, step.addField.type);
        }
        await client.query(`INSERT INTO ${this.table('_migrations')} ("id") VALUES ($1)`, [migration.id]);
        applied.add(migration.id);
      }
      this.collections = await this.loadCollections(client);
    });
  }

  async get(collection: string, id: string): Promise<Doc | undefined> {
    await this.fields(collection);
    const text = await new Promise<string | undefined>((resolve, reject) => {
      this.gets.push({ collection, id: textValue(id), resolve, reject });
    });
    // Parsed per caller: each gets its own document, as from a query of its own.
    return text === undefined ? undefined : (JSON.parse(text) as Doc);
  }

  async find(collection: string, query: Query = {}): Promise<Doc[]> {
    const fields = await this.fields(collection);
    const params: Param[] = [];
    const order = [...(query.orderBy ?? []), { field: 'id', direction: 'asc' as const }]
      .map(({ field, direction }) => {
        column(collection, fields, field);
        // The other adapters put null first ascending and last descending.
        return `${quote(field)} ${direction === 'desc' ? 'DESC NULLS LAST' : 'ASC NULLS FIRST'}`;
      })
      .join(', ');
    let sql = `SELECT "_doc" FROM ${this.table(collection)}${whereSql(collection, fields, query.where, params)} ORDER BY ${order}`;
    if (query.limit !== undefined) sql += ` LIMIT ${placeholder(params, query.limit)}`;
    if (query.offset !== undefined) sql += ` OFFSET ${placeholder(params, query.offset)}`;
    const result = await this.pool.query<{ _doc: Doc }>(sql, params);
    return result.rows.map((row) => row._doc);
  }

  async count(collection: string, where?: Where): Promise<number> {
    const fields = await this.fields(collection);
    const params: Param[] = [];
    const result = await this.pool.query<{ count: string }>(`SELECT count(*) AS "count" FROM ${this.table(collection)}${whereSql(collection, fields, where, params)}`, params);
    return Number(result.rows[0]!.count);
  }

  readonly shared = true;

  /** Other instances write the same tables, unseen by this one until it asks. */
  collectionVersion(): undefined {
    return undefined;
  }

  async write(ops: readonly WriteOp[], options?: WriteOptions): Promise<void> {
    if (ops.length === 0) {
      options?.onApplied?.();
      return;
    }
    const statements = await Promise.all(ops.map((op) => this.opStatement(op)));
    await new Promise<void>((resolve, reject) => {
      this.writes.push({ statements, resolve, reject });
    });
    // Applied and durable are one moment here: the commit.
    options?.onApplied?.();
  }

  async holdLiveness(holder: string, onLost: (error: Error) => void): Promise<LivenessHold> {
    // A connection of its own, outside the pool: the lock lasts as long as this session.
    const client = this.newClient();
    let held = true;
    const end = async (error?: Error): Promise<void> => {
      if (!held) return;
      held = false;
      this.holds.delete(client);
      if (error) onLost(error);
      // Closing the session is what frees the lock.
      await client.end().catch(() => undefined);
    };
    client.on('error', (error) => void end(new Error(`the PostgreSQL connection holding liveness of ${holder} failed: ${error.message}`)));
    client.on('end', () => void end(new Error(`the PostgreSQL connection holding liveness of ${holder} closed`)));
    this.holds.set(client, () => end());
    try {
      await client.connect();
      const result = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS "locked"', [this.livenessKey(holder)]);
      if (!result.rows[0]?.locked) throw new Error(`liveness holder ${holder} is already held`);
    } catch (error) {
      await end();
      throw error;
    }
    return { holder, release: () => end() };
  }

  async liveHolders(holders: readonly string[]): Promise<Set<string>> {
    if (holders.length === 0) return new Set();
    // A shared transaction-level lock is refused only while a live session holds the holder's lock.
    const result = await this.pool.query<{ holder: string }>(
      'SELECT "holder" FROM unnest($1::text[]) AS "holder" WHERE NOT pg_try_advisory_xact_lock_shared(hashtextextended($2 || "holder", 0))',
      [[...new Set(holders)], this.livenessKey('')],
    );
    return new Set(result.rows.map((row) => row.holder));
  }

  withLock<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.lockQueues.run(key, async () => {
      const client = await this.lockPool.connect();
      const lockKey = `runloom:lock:${this.schema}:${key}`;
      try {
        await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [lockKey]);
      } catch (error) {
        client.release(error as Error);
        throw error;
      }
      try {
        return await task();
      } finally {
        // A session whose unlock failed may still hold the lock: closed (which frees it), never reused.
        await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lockKey]).then(
          () => client.release(),
          (error: Error) => client.release(error),
        );
      }
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.holds.values()].map((end) => end()));
    await this.lockPool.end();
    await this.pool.end();
  }

  /** The text hashed into a holder's lock key: scoped by schema, so stores sharing a database stay apart. */
  private livenessKey(holder: string): string {
    return `runloom:live:${this.schema}:${holder}`;
  }

  /** Answers `gets` from one query: the distinct ids of each collection, its rows' documents as text. Never rejects. */
  private async readGets(gets: PendingGet[]): Promise<void> {
    const idsByCollection = new Map<string, Set<string>>();
    for (const { collection, id } of gets) {
      const ids = idsByCollection.get(collection) ?? new Set<string>();
      ids.add(id);
      idsByCollection.set(collection, ids);
    }
    const collections = [...idsByCollection.keys()];
    const params = collections.map((collection) => [...idsByCollection.get(collection)!]);
    const selects = collections.map(
      (collection, index) => `SELECT ${index} AS "collection", "id", "_doc"::text AS "doc" FROM ${this.table(collection)} WHERE "id" = ANY($${index + 1}::text[])`,
    );
    let rows: { collection: number; id: string; doc: string }[];
    try {
      rows = (await this.pool.query<{ collection: number; id: string; doc: string }>(selects.join(' UNION ALL '), params)).rows;
    } catch (error) {
      for (const get of gets) get.reject(error);
      return;
    }
    const found = new Map<string, string>();
    for (const row of rows) found.set(`${collections[row.collection]}/${row.id}`, row.doc);
    for (const get of gets) get.resolve(found.get(`${get.collection}/${get.id}`));
  }

  /** Commits `batch` together, or (when that fails) each of its writes in a transaction of its own. Never rejects. */
  private async commitBatch(batch: PendingWrite[]): Promise<void> {
    let alone = batch;
    if (batch.length > 1 || batch[0]!.statements.length > 1) {
      const statement = batchStatement(batch);
      alone = statement ? await this.commitStatement(batch, statement) : await this.commitInTransaction(batch);
    }
    for (const write of alone) {
      try {
        await this.writeAlone(write.statements);
        write.resolve();
      } catch (error) {
        write.reject(error);
      }
    }
  }

  /** A batch as one statement (`batchStatement`); answers the writes to run alone (all, when it failed). */
  private async commitStatement(batch: PendingWrite[], statement: { sql: string; params: Param[]; steps: BatchStep[] }): Promise<PendingWrite[]> {
    let changed: number[];
    try {
      changed = (await this.pool.query<{ changed: number[] }>(statement.sql, statement.params)).rows[0]!.changed;
    } catch (error) {
      if (answeredByServer(error)) return batch;
      for (const write of batch) write.reject(error);
      return [];
    }
    // The statement's guard has failed it unless every step that is no lone write's applied.
    const refused = new Map<PendingWrite, Error>();
    for (const [index, step] of statement.steps.entries()) refuseUnappliedLoneWrite(step, changed[index]!, refused);
    for (const [write, refusal] of refused) write.reject(refusal);
    for (const write of batch) if (!refused.has(write)) write.resolve();
    return [];
  }

  /**
   * A batch in one transaction. A write whose only operation changes no row is refused alone (it
   * changed nothing); any other failure rolls the batch back. Answers the writes to run alone.
   */
  private async commitInTransaction(batch: PendingWrite[]): Promise<PendingWrite[]> {
    const refused = new Map<PendingWrite, Error>();
    let rest = batch;
    try {
      await this.transaction(async (client) => {
        for (const step of batchSteps(batch)) {
          const result = await client.query(step.sql, step.params);
          if (!refuseUnappliedLoneWrite(step, result.rowCount, refused)) throw new BatchCannotApply();
        }
      });
      rest = [];
      for (const write of batch) if (!refused.has(write)) write.resolve();
    } catch (error) {
      rest = batch.filter((write) => !refused.has(write));
      if (!(error instanceof BatchCannotApply) && !answeredByServer(error)) {
        for (const write of rest) write.reject(error);
        rest = [];
      }
    }
    // The writes refused alone changed nothing, whatever became of the rest.
    for (const [write, refusal] of refused) write.reject(refusal);
    return rest;
  }

  /** One write in a transaction of its own (a single statement is atomic without one). */
  private async writeAlone(statements: OpStatement[]): Promise<void> {
    const [only] = statements;
    if (only && statements.length === 1) {
      await this.retrying(() => this.runOp(this.pool, only));
      return;
    }
    await this.retrying(() =>
      this.transaction(async (client) => {
        for (const statement of statements) await this.runOp(client, statement);
      }),
    );
  }

  private async runOp(runner: pg.Pool | pg.PoolClient, statement: OpStatement): Promise<void> {
    const result = await runner.query(statement.sql, statement.params);
    if (result.rowCount !== 0) return;
    throw opError(statement);
  }

  private async opStatement(op: WriteOp): Promise<OpStatement> {
    const fields = await this.fields(op.collection);
    const table = this.table(op.collection);
    const params: Param[] = [];
    if (op.op === 'delete' || op.op === 'check') {
      const conditions = [`"id" = ${placeholder(params, textValue(op.id))}`, ...conditionsSql(op.collection, fields, op.expect, params)];
      // FOR SHARE: like an UPDATE's condition, waits for a concurrent writer of the row and is
      // checked again on what it committed, and keeps the row from changing until this commits.
      const sql = op.op === 'check' ? `SELECT 1 FROM ${table} WHERE ${conditions.join(' AND ')} FOR SHARE` : `DELETE FROM ${table} WHERE ${conditions.join(' AND ')}`;
      return { op, id: op.id, sql, params };
    }
    const values = [JSON.stringify(op.doc), ...[...fields].map(([field, type]) => columnValue(type, op.doc[field]))];
    if (op.op === 'insert') {
      const columns = ['id', '_doc', ...fields.keys()].map(quote).join(', ');
      const row = [textValue(op.doc.id), ...values];
      const placeholders = row.map((value) => placeholder(params, value)).join(', ');
      return {
        op,
        id: op.doc.id,
        sql: `INSERT INTO ${table} (${columns}) VALUES (${placeholders}) ON CONFLICT ("id") DO NOTHING`,
        params,
        insert: { table, columns, row },
      };
    }
    const assignments = ['_doc', ...fields.keys()].map((field, index) => `${quote(field)} = ${placeholder(params, values[index]!)}`);
    const conditions = [`"id" = ${placeholder(params, textValue(op.doc.id))}`, ...conditionsSql(op.collection, fields, op.expect, params)];
    return { op, id: op.doc.id, sql: `UPDATE ${table} SET ${assignments.join(', ')} WHERE ${conditions.join(' AND ')}`, params };
  }

  /** The declared fields of a collection; reads the schema again once if another instance created it. */
  private async fields(collection: string): Promise<Map<string, FieldType>> {
    let fields = this.collections.get(collection);
    if (!fields) {
      this.collections = await this.loadCollections(this.pool);
      fields = this.collections.get(collection);
    }
    if (!fields) throw new Error(`unknown collection ${collection}: no migration creates it`);
    return fields;
  }

  private async loadCollections(runner: pg.Pool | pg.PoolClient): Promise<Map<string, Map<string, FieldType>>> {
    const result = await runner.query<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT c.table_name, c.column_name, c.data_type
         FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
        WHERE c.table_schema = $1 AND t.table_type = 'BASE TABLE' AND c.table_name NOT LIKE '\\_%'
        ORDER BY c.table_name, c.ordinal_position`,
      [this.schema],
    );
    const collections = new Map<string, Map<string, FieldType>>();
    for (const row of result.rows) {
      const fields = collections.get(row.table_name) ?? new Map<string, FieldType>();
      collections.set(row.table_name, fields);
      const type = FIELD_TYPES[row.data_type];
      if (type && row.column_name !== 'id' && row.column_name !== '_doc') fields.set(row.column_name, type);
    }
    return collections;
  }

  private stepStatements(step: MigrationStep, collections: ReadonlyMap<string, ReadonlyMap<string, FieldType>>): string[] {
    if ('createCollection' in step) {
      const name = checkedName('collection', step.createCollection);
      if (collections.has(name)) return [];
      const fields = Object.entries(step.fields).filter(([field]) => field !== 'id');
      const columns = fields.map(([field, type]) => `, ${quote(checkedName('field', field))} ${COLUMN_TYPES[type]}`);
      return [
        `CREATE TABLE ${this.table(name)} ("id" text COLLATE "C" PRIMARY KEY, "_doc" json NOT NULL${columns.join('')})`,
        ...fields.map(([field, type]) => this.indexStatement(name, field, type)),
      ];
    }
    if ('unindexField' in step) {
      const { collection, field } = step.unindexField;
      if (!collections.get(collection)?.has(field)) throw new Error(`unindexField ${field}: ${collection} declares no such field`);
      return [`DROP INDEX IF EXISTS ${quote(this.schema)}.${quote(`${collection}__${field}`)}`];
    }
    const { collection, field, type } = step.addField;
    const existing = collections.get(collection);
    if (!existing) throw new Error(`addField ${field}: collection ${collection} does not exist`);
    if (field === 'id' || existing.has(field)) return [];
    const name = checkedName('field', field);
    return [
      `ALTER TABLE ${this.table(collection)} ADD COLUMN ${quote(name)} ${COLUMN_TYPES[type]}`,
      `UPDATE ${this.table(collection)} SET ${quote(name)} = ${backfillSql(name, type)}`,
      this.indexStatement(collection, name, type),
    ];
  }

  /**
   * Fills an added column for documents holding a NUL character, which PostgreSQL's json operators
   * refuse (`backfillSql` leaves them null): read them and store the value as `write` would.
   */
  private async backfillDocsWithNul(client: pg.PoolClient, collection: string, field: string, type: FieldType): Promise<void> {
    const rows = await client.query<{ id: string; _doc: Doc }>(`SELECT "id", "_doc" FROM ${this.table(collection)} WHERE ${HOLDS_NUL}`);
    for (const row of rows.rows) {
      await client.query(`UPDATE ${this.table(collection)} SET ${quote(field)} = $1 WHERE "id" = $2`, [columnValue(type, row._doc[field]), row.id]);
    }
  }

  private indexStatement(collection: string, field: string, type: FieldType): string {
    // json fields are searched with @> (hasAll), which a GIN index serves.
    const method = type === 'json' ? 'USING gin ' : '';
    return `CREATE INDEX ${quote(`${collection}__${field}`)} ON ${this.table(collection)} ${method}(${quote(field)})`;
  }

  private table(name: string): string {
    return `${quote(this.schema)}.${quote(name)}`;
  }

  private async transaction<T>(body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await body(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** Runs a write again after a deadlock or serialization failure (nothing of it was applied). */
  private async retrying(write: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await write();
        return;
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (attempt >= WRITE_ATTEMPTS || code === undefined || !RETRYABLE.has(code)) throw error;
      }
    }
  }
}

/** A `get` waiting for its query: the collection and the id as stored (`textValue`). */
interface PendingGet {
  collection: string;
  id: string;
  resolve(docText: string | undefined): void;
  reject(error: unknown): void;
}

/**
 * Whether PostgreSQL answered `error` (it has a SQLSTATE): the statement or transaction then did
 * not apply. Without an answer (a broken connection) a commit may have happened, and running the
 * writes again could apply them twice: they fail instead, as a lone write would.
 */
function answeredByServer(error: unknown): boolean {
  return (error as { code?: unknown }).code !== undefined;
}

/** A write of a batch changed fewer rows than it must, and undoing it needs the batch rolled back. */
class BatchCannotApply extends Error {}

/**
 * Whether `step` of a batch applied (it changed `changed` rows, as it must) or is the only
 * operation of a write (`alone`), which, having then changed nothing, is refused alone in `refused`.
 * False: the batch cannot apply.
 */
function refuseUnappliedLoneWrite(step: BatchStep, changed: number | null, refused: Map<PendingWrite, Error>): boolean {
  if (changed === step.rows) return true;
  if (!step.alone) return false;
  refused.set(step.alone, opError(step.alone.statements[0]!));
  return true;
}

/** What a write gets when `statement` changed no row: its id exists (insert), or its precondition failed. */
function opError(statement: OpStatement): Error {
  const { op, id } = statement;
  return op.op === 'insert' ? new DuplicateIdError(op.collection, id) : new WriteConflictError(op.collection, id);
}

/**
 * Opens a pool on `url` (`postgres://…` or `postgresql://…`) and checks that the server answers, so
 * a wrong URL fails at start rather than on the first request. The driver is imported here, so a
 * server on the embedded store never loads it (5 MB of RSS).
 */
export async function openPostgresDatabase(url: string, options: PostgresDatabaseOptions = {}): Promise<PostgresDatabase> {
  const { connectionString, schema: schemaInUrl } = splitSchemaParameter(url);
  const schema = checkedName('schema', options.schema ?? schemaInUrl ?? 'public');
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString, max: options.maxConnections ?? 10 });
  // An idle connection that breaks must not crash the process; the next query opens a new one.
  pool.on('error', (error) => options.logger?.warn({ error: error.message }, 'idle PostgreSQL connection failed'));
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new Error(`cannot reach PostgreSQL at ${redactedUrl(url)}: ${(error as Error).message}`);
  }
  // `withLock`'s sessions: each held for a whole task, so apart from the pool the tasks query with.
  const lockPool = new pg.Pool({ connectionString, max: LOCK_SESSIONS });
  lockPool.on('error', (error) => options.logger?.warn({ error: error.message }, 'idle PostgreSQL lock connection failed'));
  return new PostgresDatabase(pool, schema, () => new pg.Client({ connectionString }), lockPool);
}

/** Takes Runloom's own `schema` parameter out of the URL before the driver reads it. */
function splitSchemaParameter(url: string): { connectionString: string; schema?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { connectionString: url };
  }
  const schema = parsed.searchParams.get('schema') ?? undefined;
  if (schema === undefined) return { connectionString: url };
  parsed.searchParams.delete('schema');
  return { connectionString: parsed.toString(), schema };
}

/** The URL without its password, for messages. */
function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the given databaseUrl';
  }
}

function whereSql(collection: string, fields: ReadonlyMap<string, FieldType>, where: Where | undefined, params: Param[]): string {
  const conditions = conditionsSql(collection, fields, where, params);
  return conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
}

function conditionsSql(collection: string, fields: ReadonlyMap<string, FieldType>, where: Where | undefined, params: Param[]): string[] {
  if (!where) return [];
  return Object.entries(where).map(([field, condition]) => conditionSql(field, column(collection, fields, field), condition, params));
}

/** The declared type of a queried field (`id` is text), or an error naming what to declare. */
function column(collection: string, fields: ReadonlyMap<string, FieldType>, field: string): FieldType {
  if (field === 'id') return 'text';
  const type = fields.get(field);
  if (!type) throw new Error(`${field} is not a declared field of ${collection}: declare it in a migration to query, order or expect on it`);
  return type;
}

/** SQL for one condition, with the meaning `ports/database-where.ts` gives it. */
function conditionSql(field: string, type: FieldType, condition: Condition, params: Param[]): string {
  const name = quote(field);
  if (condition === null) return `${name} IS NULL`;
  if (typeof condition !== 'object') return `${name} = ${placeholder(params, columnValue(type, condition))}`;
  if ('in' in condition) {
    if (condition.in.length === 0) return 'FALSE';
    return `${name} IN (${condition.in.map((value) => placeholder(params, columnValue(type, value))).join(', ')})`;
  }
  if ('hasAll' in condition) {
    if (type !== 'json') return 'FALSE';
    return `(jsonb_typeof(${name}) = 'array' AND ${name} @> ${placeholder(params, JSON.stringify(condition.hasAll))})`;
  }
  if ('ne' in condition) {
    if (condition.ne === null) return `${name} IS NOT NULL`;
    return `${name} IS DISTINCT FROM ${placeholder(params, columnValue(type, condition.ne))}`;
  }
  const [operator, value] =
    'lt' in condition ? ['<', condition.lt]
    : 'lte' in condition ? ['<=', condition.lte]
    : 'gt' in condition ? ['>', condition.gt]
    : ['>=', condition.gte];
  return `${name} ${operator} ${placeholder(params, columnValue(type, value))}`;
}

/**
 * A document value as its field's column holds it. Agrees with `backfillSql`: a value of another
 * type than the column's is null there (text columns take any value, as its JSON text).
 */
function columnValue(type: FieldType, value: unknown): Param {
  if (value === undefined || value === null) return null;
  switch (type) {
    case 'text':
      return typeof value === 'string' ? textValue(value) : JSON.stringify(value);
    case 'integer':
    case 'real':
      return typeof value === 'number' && Number.isFinite(value) ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'json':
      return JSON.stringify(value);
  }
}

/** A stored document that PostgreSQL's json operators cannot take apart (it holds an escaped NUL). */
const HOLDS_NUL = `strpos("_doc"::text, '\\u0000') > 0`;

/**
 * The column value of an added field, computed from stored documents as `columnValue` would.
 * Documents holding NUL are left null here; `backfillDocsWithNul` fills those.
 */
function backfillSql(field: string, type: FieldType): string {
  return `CASE WHEN ${HOLDS_NUL} THEN NULL ELSE ${backfillValueSql(field, type)} END`;
}

function backfillValueSql(field: string, type: FieldType): string {
  const value = `("_doc" -> '${field}')`;
  const kind = `json_typeof${value}`;
  switch (type) {
    case 'text':
      return `CASE WHEN ${kind} = 'string' THEN replace("_doc" ->> '${field}', chr(1), chr(1) || chr(2))
        WHEN ${kind} = 'null' THEN NULL ELSE ${value}::text END`;
    case 'integer':
      return `CASE WHEN ${kind} = 'number' THEN ("_doc" ->> '${field}')::numeric END`;
    case 'real':
      return `CASE WHEN ${kind} = 'number' THEN ("_doc" ->> '${field}')::double precision END`;
    case 'boolean':
      return `CASE WHEN ${kind} = 'boolean' THEN ("_doc" ->> '${field}')::boolean END`;
    case 'json':
      return `CASE WHEN ${kind} = 'null' THEN NULL ELSE ${value}::jsonb END`;
  }
}

/**
 * A string as a text column holds it. PostgreSQL text cannot contain NUL, so NUL becomes \x01\x01 and
 * \x01 becomes \x01\x02: still one-to-one and in the same order, so every condition keeps its meaning.
 */
function textValue(value: string): string {
  if (!value.includes('\u0000') && !value.includes('\u0001')) return value;
  // \x01 first, so the \x01s that stand for NUL are not escaped again.
  return value.replaceAll('\u0001', '\u0001\u0002').replaceAll('\u0000', '\u0001\u0001');
}

function checkedName(kind: string, name: string): string {
  if (!NAME_PATTERN.test(name) || name.startsWith('pg_')) {
    throw new Error(`${kind} name ${JSON.stringify(name)} must be letters, digits and underscores, starting with a letter`);
  }
  return name;
}

function quote(identifier: string): string {
  return `"${identifier}"`;
}
