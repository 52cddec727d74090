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
 * One step of a batch (a `WITH` clause of its `batchStatement`, or else a statement of its
 * transaction) and how many rows it must change (a `check`'s query: find). `alone` names the write
 * it is the only operation of: when it changes no row, that write failed without changing
 * anything, so it alone is refused and the rest of the batch goes on.
 */
export interface BatchStep {
  sql: string;
  params: Param[];
  rows: number;
  alone?: PendingWrite;
  /** A `check` op's query (`SELECT … FOR SHARE`), which changes nothing. */
  query?: boolean;
}

/** PostgreSQL's limit on the parameters of one statement. */
const MAX_STATEMENT_PARAMETERS = 65_535;

/**
 * The steps that apply every write of `batch` at once (the clauses of `batchStatement`, or else the
 * statements of one transaction, in order). The inserts into a collection that the batch only
 * inserts into become one multi-row insert per collection (rows in batch order): tables have no
 * constraints between them, so steps on different collections may run in any order. Every other
 * operation runs as itself, in batch order.
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
        steps.push({
          sql: statement.sql,
          params: statement.params,
          rows: 1,
          alone: write.statements.length === 1 ? write : undefined,
          query: statement.op.op === 'check',
        });
      }
    }
  }
  return [...[...inserts.values()].flatMap((rows) => multiRowInserts(rows)), ...steps];
}

/**
 * One statement applying every write of `batch` (its `batchSteps`), so a batch costs one round trip
 * and no `BEGIN`/`COMMIT`: each step a data-modifying `WITH` clause returning the rows it changed,
 * the statement answering how many each changed (`changed`, in step order). A statement is atomic
 * by itself: when a step that is not a lone write's only operation changes another number of rows
 * than it must, the statement fails whole (a cast error it raises on purpose) and nothing applies.
 * A lone write's step that changes no row changed nothing: its write is refused, the rest apply.
 * Undefined when a row is written twice, or written and checked (the clauses of one statement do
 * not see each other's changes, where a transaction's statements would), or it would pass the
 * parameter limit. Checks of one row by several writes are fine: none changes it.
 */
export function batchStatement(batch: readonly PendingWrite[]): { sql: string; params: Param[]; steps: BatchStep[] } | undefined {
  const written = new Set<string>();
  const checked = new Set<string>();
  for (const write of batch) {
    for (const { op, id } of write.statements) {
      const row = `${op.collection}/${id}`;
      if (written.has(row) || (op.op !== 'check' && checked.has(row))) return undefined;
      (op.op === 'check' ? checked : written).add(row);
    }
  }
  const steps = batchSteps(batch);
  const params: Param[] = [];
  const clauses: string[] = [];
  for (const [index, step] of steps.entries()) {
    if (params.length + step.params.length > MAX_STATEMENT_PARAMETERS) return undefined;
    // Generated SQL holds `$` only in placeholders (names are checked, values are parameters).
    const sql = step.sql.replace(/\$(\d+)/g, (_, number: string) => `$${params.length + Number(number)}`);
    params.push(...step.params);
    clauses.push(`"s${index}" AS (${step.query ? sql : `${sql} RETURNING 1`})`);
  }
  const changed = steps.map((_, index) => `(SELECT count(*) FROM "s${index}")`);
  const mustApply = steps.flatMap((step, index) => (step.alone ? [] : [`${changed[index]} = ${step.rows}`]));
  const guard =
    mustApply.length === 0 ? '' : (
      ` WHERE CAST(CASE WHEN ${mustApply.join(' AND ')} THEN '1' ELSE 'a write of the batch cannot apply' END AS integer) = 1`
    );
  return { sql: `WITH ${clauses.join(', ')} SELECT ARRAY[${changed.join(', ')}]::integer[] AS "changed"${guard}`, params, steps };
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
    const values = chunk.map(({ row }) => `(${row.map((value) => placeholder(params, value)).join(', ')})`);
    steps.push({ sql: `INSERT INTO ${table} (${columns}) VALUES ${values.join(', ')} ON CONFLICT ("id") DO NOTHING`, params, rows: chunk.length });
  }
  return steps;
}

export function placeholder(params: Param[], value: Param): string {
  params.push(value);
  return `$${params.length}`;
}
