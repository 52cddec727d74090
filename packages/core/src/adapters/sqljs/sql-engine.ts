import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import initSqlJs from 'sql.js';
import { decodeRecord } from './log-format';

/** A value bound to a query. */
export type SqlParam = string | number | null;

/**
 * A value bound to a statement that writes: also bytes, a document's UTF-8 text for a
 * `CAST(? AS TEXT)` parameter (see `bindable`). Logged statements carry only these, so replay is exact.
 */
export type StatementParam = SqlParam | Uint8Array;

/** One executed statement as it goes into the operation log: SQL text and its parameters. */
export type LoggedStatement = [sql: string, params: StatementParam[]];

/** Statements kept prepared; the hot ones (insert, update, get per collection) stay in. */
const STATEMENT_CACHE_SIZE = 256;

/** A prepared statement and which of its parameters are written `CAST(? AS TEXT)`. */
interface PreparedStatement {
  statement: initSqlJs.Statement;
  textAsBytes: readonly number[];
}

const utf8 = new TextEncoder();

/**
 * Where `sql-wasm.wasm` is: next to the bundle (esbuild.mjs copies it there), else in the sql.js
 * package when running from source.
 */
export function locateSqlWasm(): string {
  const bundled = path.join(__dirname, 'sql-wasm.wasm');
  // Resolved at run time (createRequire keeps bundlers from trying to inline a .wasm path).
  return existsSync(bundled) ? bundled : createRequire(__filename).resolve('sql.js/dist/sql-wasm.wasm');
}

const modules = new Map<string, Promise<initSqlJs.SqlJsStatic>>();

/**
 * sql.js with its wasm compiled and instantiated synchronously (lazily compiled functions make that
 * a few milliseconds). sql.js's own asynchronous instantiation resolves through a V8 platform task,
 * not the event loop: when the loop has nothing else pending (a server's start), Node runs that task
 * while draining the platform, and that drain then waits for every background task before the loop
 * goes on, including the optimising compiles of the wasm functions the first statements made hot:
 * a start waited ~0.3 s of compile CPU for them.
 */
function loadSqlJs(wasmPath: string): Promise<initSqlJs.SqlJsStatic> {
  let module = modules.get(wasmPath);
  if (!module) {
    module = initSqlJs({
      instantiateWasm: (imports, receive) => {
        const instance = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(wasmPath)), imports);
        receive(instance);
        return instance.exports;
      },
    });
    modules.set(wasmPath, module);
  }
  return module;
}

/**
 * One sql.js database with a cache of prepared statements. The main thread and the snapshot
 * worker both drive it, so the same logged statements produce the same state in each.
 *
 * The database opens on the first statement (or export), not with the engine: a fresh store
 * replaces its empty database with its template's image before running anything (`replaceImage`),
 * and opening, configuring and closing the empty one first cost its start ~1-2 ms for nothing.
 */
export class SqlEngine {
  private readonly statements = new Map<string, PreparedStatement>();
  /** Whether writes of this event-loop turn hold an open transaction (see `write`). */
  private turnTransaction = false;
  /** The open database; undefined until the first statement opens it on `image`. */
  private db: initSqlJs.Database | undefined;
  private closed = false;

  private constructor(
    private readonly sql: initSqlJs.SqlJsStatic,
    /** What the database opens on (empty without one), until it is open. */
    private image: Uint8Array | undefined,
  ) {}

  static async open(wasmPath: string, image?: Uint8Array): Promise<SqlEngine> {
    return new SqlEngine(await loadSqlJs(wasmPath), image);
  }

  /** Replaces the whole database with `image` (empty without one), as opening on it would; what was not committed is. */
  replaceImage(image?: Uint8Array): void {
    if (this.db) {
      this.commitTurn();
      // Closing frees every prepared statement.
      this.statements.clear();
      this.db.close();
      this.db = undefined;
    }
    this.image = image;
  }

  /** Runs one statement; answers how many rows it changed. */
  run(sql: string, params: StatementParam[] = []): number {
    const { statement, textAsBytes } = this.prepared(sql);
    try {
      statement.bind(bindable(params, textAsBytes));
      while (statement.step());
    } finally {
      statement.reset();
    }
    return this.database().getRowsModified();
  }

  /** Every row of a query, as arrays of column values. */
  all(sql: string, params: SqlParam[] = []): initSqlJs.SqlValue[][] {
    const { statement, textAsBytes } = this.prepared(sql);
    const rows: initSqlJs.SqlValue[][] = [];
    try {
      statement.bind(bindable(params, textAsBytes));
      while (statement.step()) rows.push(statement.get());
    } finally {
      statement.reset();
    }
    return rows;
  }

  /**
   * Runs `body`, one write, atomically: all of its statements apply or (when it throws) none.
   * Writes share one transaction until the end of the event-loop turn, because a commit copies
   * every page it dirtied into the image and that copy, once per write, was half of a write's
   * cost. The transaction is no durability boundary (the log is), and every reader uses this
   * connection, so it sees each write whole as soon as `body` returns.
   */
  write<T>(body: () => T, singleStatement: boolean): T {
    if (!this.turnTransaction) {
      this.run('BEGIN');
      this.turnTransaction = true;
      setImmediate(() => this.commitTurn());
    }
    // A single statement is atomic by itself; a batch of them needs a savepoint to undo.
    if (singleStatement) return body();
    this.run('SAVEPOINT write');
    try {
      const result = body();
      this.run('RELEASE write');
      return result;
    } catch (error) {
      this.run('ROLLBACK TO write');
      this.run('RELEASE write');
      throw error;
    }
  }

  /** Runs `body` in a transaction of its own: all of its statements apply, or (when it throws) none. */
  transaction<T>(body: () => T): T {
    this.commitTurn();
    this.run('BEGIN');
    try {
      const result = body();
      this.run('COMMIT');
      return result;
    } catch (error) {
      try {
        this.run('ROLLBACK');
      } catch {
        // Some failures (e.g. out of memory) end the transaction themselves: nothing to undo.
      }
      throw error;
    }
  }

  /** Applies operation-log records (their payloads, see `encodeRecord`) in one transaction. */
  applyRecords(payloads: readonly Buffer[]): void {
    if (payloads.length === 0) return;
    this.transaction(() => {
      for (const payload of payloads) {
        for (const [sql, params] of decodeRecord(payload)) this.run(sql, params);
      }
    });
  }

  /** Size of the database image in bytes. */
  byteSize(): number {
    const [[pages]] = this.all('PRAGMA page_count') as [[number]];
    const [[pageSize]] = this.all('PRAGMA page_size') as [[number]];
    return pages * pageSize;
  }

  /** The database image. Blocks for as long as copying it takes: call it off the main thread. */
  export(): Uint8Array {
    this.commitTurn();
    // sql.js (1.16, the version required) copies the database out through SQLite's backup API
    // into a file of its own: this connection, its settings and its prepared statements
    // stay as they were. Forgetting the statements here (as when export reopened the database) left
    // each one unfreed in the replica's wasm memory at every snapshot, and prepared again after it.
    return this.database().export();
  }

  close(): void {
    this.replaceImage();
    this.closed = true;
  }

  private commitTurn(): void {
    if (!this.turnTransaction) return;
    this.turnTransaction = false;
    this.run('COMMIT');
  }

  /** The database, opened on `image` by the first statement. */
  private database(): initSqlJs.Database {
    if (this.db) return this.db;
    if (this.closed) throw new Error('the database is closed');
    const db = new this.sql.Database(this.image);
    // The image lives in memory and durability comes from the operation log, not from SQLite.
    // Exclusive locking keeps the page cache valid across transactions (no header re-read and
    // re-lock per commit): it makes a small write about five times cheaper.
    try {
      db.run('PRAGMA locking_mode = EXCLUSIVE');
      db.run('PRAGMA journal_mode = MEMORY');
      db.run('PRAGMA synchronous = OFF');
      db.run('PRAGMA temp_store = MEMORY');
    } catch (error) {
      db.close();
      throw error;
    }
    this.db = db;
    this.image = undefined;
    return db;
  }

  private prepared(sql: string): PreparedStatement {
    let prepared = this.statements.get(sql);
    if (prepared) {
      // Re-insert: the map's order is the eviction order (least recently used first).
      this.statements.delete(sql);
    } else {
      prepared = { statement: this.database().prepare(sql), textAsBytes: castToTextParameters(sql) };
      if (this.statements.size >= STATEMENT_CACHE_SIZE) {
        const [oldestSql, oldest] = this.statements.entries().next().value as [string, PreparedStatement];
        this.statements.delete(oldestSql);
        oldest.statement.free();
      }
    }
    this.statements.set(sql, prepared);
    return prepared;
  }
}

/**
 * Indexes of the parameters written exactly `CAST(? AS TEXT)` in `sql` (whose only `?` are
 * parameters: the schema writes no literals holding one).
 */
function castToTextParameters(sql: string): number[] {
  const indexes: number[] = [];
  let index = 0;
  for (let at = sql.indexOf('?'); at >= 0; at = sql.indexOf('?', at + 1), index += 1) {
    if (sql.startsWith('CAST(', at - 5) && sql.startsWith(' AS TEXT)', at + 1)) indexes.push(index);
  }
  return indexes;
}

/**
 * The parameters as bound: strings at `textAsBytes` go in as their UTF-8 bytes, which the SQL
 * casts back to the same TEXT. sql.js encodes a bound string in JavaScript, about 13 us per KiB
 * (most of writing a document); TextEncoder takes a small part of that. Writes give documents as
 * bytes already (`CollectionSchema.rowValues`); strings come from logs written before they did.
 */
function bindable(params: StatementParam[], textAsBytes: readonly number[]): StatementParam[] {
  // Copied only when a string is there to encode: a write's own parameters are bound as they are.
  let bound = params;
  for (const index of textAsBytes) {
    const value = params[index];
    if (typeof value !== 'string') continue;
    if (bound === params) bound = [...params];
    bound[index] = utf8.encode(value);
  }
  return bound;
}
