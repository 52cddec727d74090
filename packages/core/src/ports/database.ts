/**
 * The `Database` port: a small document store that every record kind is kept in.
 *
 * Adapters implement only this interface (sql.js, PostgreSQL, memory); typed repositories are
 * built on it in `domain/storage`. Every adapter passes the contract suite in
 * `adapters/database.contract.ts`.
 *
 * Guarantees an adapter gives:
 * - `write(ops)` applies all of its operations or none, and when its promise resolves the change
 *   is durable (it survives a crash of the process). No reader ever sees a half-applied `write`.
 * - A `replace`/`delete` whose `expect` does not match the stored document fails the whole batch
 *   with `WriteConflictError` (also when the document is missing); an `insert` of an existing id
 *   fails it with `DuplicateIdError`. That is how services make state transitions race-free.
 * - Only declared fields can be queried, ordered or expected; the rest of a document is stored as
 *   it is and returned equal (JSON round trip).
 */
export const Database = Symbol.for('runloom.Database');

/** A stored document. `id` is its key within its collection. */
export type Doc = { id: string } & Record<string, unknown>;

/** Column type of a queryable field. `json` fields hold arrays of strings (e.g. tags). */
export type FieldType = 'text' | 'integer' | 'real' | 'boolean' | 'json';

/**
 * A condition on one declared field. A bare value means equality (`null` matches null/absent).
 * `hasAll` may come from client input: adapters evaluate it with a query of fixed size whatever
 * the list's length (one parameter holding the list). `in` is for fixed sets named in code.
 */
export type Condition =
  | string
  | number
  | boolean
  | null
  | { in: (string | number)[] }
  | { hasAll: string[] }
  | { lt: string | number }
  | { lte: string | number }
  | { gt: string | number }
  | { gte: string | number }
  | { ne: string | number | boolean | null };

export type Where = Record<string, Condition>;

export interface Query {
  where?: Where;
  orderBy?: { field: string; direction?: 'asc' | 'desc' }[];
  limit?: number;
  offset?: number;
}

export type WriteOp =
  | { op: 'insert'; collection: string; doc: Doc }
  | { op: 'replace'; collection: string; doc: Doc; expect?: Where }
  | { op: 'delete'; collection: string; id: string; expect?: Where };

/** One step of a migration. */
export type MigrationStep =
  | { createCollection: string; fields: Record<string, FieldType> }
  | { addField: { collection: string; field: string; type: FieldType } };

/**
 * A named, versioned schema change. Features contribute their own (`runnables/001-create`);
 * an adapter applies, in the order given, each one it has not recorded yet, and records it.
 */
export interface Migration {
  id: string;
  steps: MigrationStep[];
}

export interface Database {
  /** What this store is, beyond the guarantees every adapter keeps. */
  readonly capabilities: DatabaseCapabilities;
  /** Brings the schema up to date. Called once, before any other method. */
  migrate(migrations: readonly Migration[]): Promise<void>;
  get(collection: string, id: string): Promise<Doc | undefined>;
  /** Documents matching `query.where`, ordered by `orderBy` (default: id ascending). */
  find(collection: string, query?: Query): Promise<Doc[]>;
  count(collection: string, where?: Where): Promise<number>;
  /** Applies every op atomically and durably; see the guarantees above. */
  write(ops: readonly WriteOp[]): Promise<void>;
  /** Flushes and releases the store; no call may follow. */
  close(): Promise<void>;
}

export interface DatabaseCapabilities {
  /**
   * No other process uses this store while it is open (sql.js holds a lock on its files; memory is
   * the process's own): what a previous process left running is known to be abandoned, so the job
   * queue offers it again at start instead of waiting for its lease to expire.
   */
  readonly exclusive: boolean;
}

/** Thrown by `write` when an `expect` precondition fails or the document to change is missing. */
export class WriteConflictError extends Error {
  constructor(
    readonly collection: string,
    readonly id: string,
  ) {
    super(`write conflict on ${collection}/${id}`);
    this.name = 'WriteConflictError';
  }
}

/** Thrown by `write` when an `insert` names an id that exists. */
export class DuplicateIdError extends Error {
  constructor(
    readonly collection: string,
    readonly id: string,
  ) {
    super(`duplicate id ${collection}/${id}`);
    this.name = 'DuplicateIdError';
  }
}
