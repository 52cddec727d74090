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
 * - Durability keeps write order: a write made after another has applied (its `onApplied`) is
 *   never durable without it, and fails when it fails.
 * - A `replace`/`delete`/`check` whose `expect` does not match the stored document fails the whole batch
 *   with `WriteConflictError` (also when the document is missing); an `insert` of an existing id
 *   fails it with `DuplicateIdError`. That is how services make state transitions race-free.
 * - Only declared fields can be queried, ordered or expected; the rest of a document is stored as
 *   it is and returned equal (JSON round trip).
 * - Liveness of the processes sharing the store (`holdLiveness`, `liveHolders`): a holder is live
 *   from `holdLiveness` until its hold is released, the handle is closed or its process dies, and
 *   the store sees that death at once, without a timeout, so work a dead process held (the job
 *   queue's running jobs) can be taken back at once. A live holder is never reported dead; a dead
 *   one may rarely be reported live (its work then waits for its own timeout).
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
  | { op: 'delete'; collection: string; id: string; expect?: Where }
  /**
   * Writes nothing: the write fails (`WriteConflictError`) unless the document exists and matches
   * `expect`, checked like a `replace`'s, at the same point as the write's other ops. Lets a write
   * rest on a document read earlier (a kept copy) without reading it again.
   */
  | { op: 'check'; collection: string; id: string; expect: Where };

/** One step of a migration. */
export type MigrationStep =
  | { createCollection: string; fields: Record<string, FieldType> }
  | { addField: { collection: string; field: string; type: FieldType } }
  /**
   * Keeps no index for a declared field that no query filters or orders on (one only `expect`ed on
   * a document found by id): adapters index every declared field, and such an index costs each
   * write and serves no read. The field stays declared; a query on it still answers, by scanning.
   */
  | { unindexField: { collection: string; field: string } };

/**
 * A named, versioned schema change. Features contribute their own (`runnables/001-create`);
 * an adapter applies, in the order given, each one it has not recorded yet, and records it.
 */
export interface Migration {
  id: string;
  steps: MigrationStep[];
}

/** Options of one `Database.write`. */
export interface WriteOptions {
  /**
   * Called once the write has applied (every read sees it), which may be before it is durable:
   * work that need not wait for its durability starts here, and anything it writes is durable
   * only along with this write (see the guarantees above). Not called when the write fails to
   * apply (a conflict, a duplicate id); the write's promise may still fail after it was called.
   */
  onApplied?: () => void;
}

export interface Database {
  /** Brings the schema up to date. Called once, before any other method. */
  migrate(migrations: readonly Migration[]): Promise<void>;
  get(collection: string, id: string): Promise<Doc | undefined>;
  /** Documents matching `query.where`, ordered by `orderBy` (default: id ascending). */
  find(collection: string, query?: Query): Promise<Doc[]>;
  count(collection: string, where?: Where): Promise<number>;
  /**
   * Whether other processes may open this store too (instances sharing PostgreSQL): what one
   * process writes must then be in the store before another can be told of it.
   */
  readonly shared: boolean;
  /**
   * A number that changes with every write to `collection` that this handle's reads can see, known
   * without asking the store: while it stays the same, every read of the collection answers the
   * same, so an answer built from them may be kept under it. Undefined when the handle cannot know
   * that (processes sharing the store write it too: PostgreSQL); nothing may then be kept by it.
   */
  collectionVersion(collection: string): number | undefined;
  /** Applies every op atomically and durably; see the guarantees above. */
  write(ops: readonly WriteOp[], options?: WriteOptions): Promise<void>;
  /**
   * Marks `holder` (a unique id, e.g. a queue worker's) live for as long as the hold lasts: until
   * `release()`, `close()`, or the death of this process. `onLost` is called (once) if the hold
   * ends while the process lives, e.g. when the connection that holds it breaks: other processes
   * then see the holder dead, so whatever it holds must stop.
   */
  holdLiveness(holder: string, onLost: (error: Error) => void): Promise<LivenessHold>;
  /** The ones of `holders` that are live now (see `holdLiveness`). */
  liveHolders(holders: readonly string[]): Promise<Set<string>>;
  /**
   * Runs `task` holding the lock named `key`: alone among the holders of that key in every process
   * sharing this store, in the order this process called (FIFO per key). For read-modify-write
   * sequences outside the store, e.g. a file of a workspace on a volume instances share. A failing
   * task releases the lock too. Never take a lock inside a task: two could wait for each other.
   */
  withLock<T>(key: string, task: () => Promise<T>): Promise<T>;
  /** Flushes and releases the store, and every liveness hold taken through it; no call may follow. */
  close(): Promise<void>;
}

/** A holder kept live by `Database.holdLiveness`. */
export interface LivenessHold {
  readonly holder: string;
  /** Ends the hold: the holder is dead from then on. `onLost` is not called. */
  release(): Promise<void>;
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
