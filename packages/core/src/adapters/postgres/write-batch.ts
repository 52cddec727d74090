import type { WriteOp } from '../../ports/database';

export type Param = string | number | boolean | null;

/** One operation of a write as SQL. An insert also keeps its row, so a batch can merge inserts. */
export interface OpStatement {
  op: WriteOp;
  id: string;
  sql: string;
  params: Param[];
  insert?: { table: string; columns: string; row: Param[] };
}

/** A write waiting for its batch: its statements, and how to tell its caller the outcome. */
export interface PendingWrite {
  statements: OpStatement[];
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * One statement of a batch's transaction and how many rows it must change. `alone` names the
 * write it is the only operation of: when it changes no row, that write failed without changing
 * anything, so it alone is refused and the rest of the batch goes on.
 */
export interface BatchStep {
  sql: string;
  params: Param[];
  rows: number;
  alone?: PendingWrite;
}

/** PostgreSQL's limit on the parameters of one statement. */
const MAX_STATEMENT_PARAMETERS = 65_535;

/**
 * The statements that apply every write of `batch` in one transaction. The inserts into a
 * collection that the batch only inserts into become one multi-row insert per collection (rows in
 * batch order): tables have no constraints between them, so statements on different collections
 * may run in any order. Every other operation runs as itself, in batch order.
 */
export function batchSteps(batch: readonly PendingWrite[]): BatchStep[] {
  const onlyInserts = new Map<string, boolean>();
  for (const write of batch) {
    for (const { op } of write.statements) onlyInserts.set(op.collection, (onlyInserts.get(op.collection) ?? true) && op.op === 'insert');
  }
  const inserts = new Map<string, NonNullable<OpStatement['insert']>[]>();
  const steps: BatchStep[] = [];
  for (const write of batch) {
    for (const statement of write.statements) {
      if (statement.insert && onlyInserts.get(statement.op.collection)) {
        const rows = inserts.get(statement.op.collection) ?? [];
        rows.push(statement.insert);
        inserts.set(statement.op.collection, rows);
      } else {
        steps.push({ sql: statement.sql, params: statement.params, rows: 1, alone: write.statements.length === 1 ? write : undefined });
      }
    }
  }
  return [...[...inserts.values()].flatMap((rows) => multiRowInserts(rows)), ...steps];
}

/**
 * One statement applying every write of a batch that only inserts (creates, mostly): the inserts
 * of each collection as one multi-row `INSERT`, chained as data-modifying `WITH` clauses. A
 * statement is atomic by itself, so it needs no transaction round trips; it has no `ON CONFLICT`,
 * so an existing id fails it whole (and the batch's writes then run one by one to say whose).
 * Undefined when the batch does anything else or would pass the parameter limit.
 */
export function insertOnlyStatement(batch: readonly PendingWrite[]): { sql: string; params: Param[] } | undefined {
  const inserts = new Map<string, NonNullable<OpStatement['insert']>[]>();
  let parameters = 0;
  for (const write of batch) {
    for (const { op, insert } of write.statements) {
      if (!insert) return undefined;
      parameters += insert.row.length;
      const rows = inserts.get(op.collection) ?? [];
      rows.push(insert);
      inserts.set(op.collection, rows);
    }
  }
  if (parameters > MAX_STATEMENT_PARAMETERS) return undefined;
  const params: Param[] = [];
  const clauses = [...inserts.values()].map((rows) => `INSERT INTO ${rows[0]!.table} (${rows[0]!.columns}) VALUES ${valuesSql(rows, params)}`);
  const last = clauses.pop()!;
  const sql = clauses.length === 0 ? last : `WITH ${clauses.map((clause, index) => `"w${index}" AS (${clause})`).join(', ')} ${last}`;
  return { sql, params };
}

/** `INSERT … VALUES (…), (…) ON CONFLICT DO NOTHING`, split where it would pass the parameter limit. */
function multiRowInserts(rows: NonNullable<OpStatement['insert']>[]): BatchStep[] {
  const { table, columns } = rows[0]!;
  const perRow = rows[0]!.row.length;
  const rowsPerStatement = Math.max(1, Math.floor(MAX_STATEMENT_PARAMETERS / perRow));
  const steps: BatchStep[] = [];
  for (let start = 0; start < rows.length; start += rowsPerStatement) {
    const chunk = rows.slice(start, start + rowsPerStatement);
    const params: Param[] = [];
    steps.push({ sql: `INSERT INTO ${table} (${columns}) VALUES ${valuesSql(chunk, params)} ON CONFLICT ("id") DO NOTHING`, params, rows: chunk.length });
  }
  return steps;
}

function valuesSql(rows: NonNullable<OpStatement['insert']>[], params: Param[]): string {
  return rows.map(({ row }) => `(${row.map((value) => placeholder(params, value)).join(', ')})`).join(', ');
}

export function placeholder(params: Param[], value: Param): string {
  params.push(value);
  return `$${params.length}`;
}
