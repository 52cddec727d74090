import type { Condition, Doc, FieldType, Migration, MigrationStep, Query, Where } from '../../ports/database';
import type { LoggedStatement, SqlEngine, SqlParam, StatementParam } from './sql-engine';

/**
 * How documents map onto SQLite: one table per collection with `id TEXT PRIMARY KEY`, the whole
 * document as JSON in `_doc`, and one indexed column per declared field (a copy of the document's
 * value, kept for queries). Applied migration ids are rows of `_migrations`.
 */
export const CREATE_MIGRATIONS_TABLE =
  'CREATE TABLE IF NOT EXISTS "_migrations" ("id" TEXT PRIMARY KEY NOT NULL, "applied_at" TEXT NOT NULL)';
export const SELECT_MIGRATION_IDS = 'SELECT "id" FROM "_migrations"';
export const INSERT_MIGRATION = 'INSERT INTO "_migrations" ("id", "applied_at") VALUES (?, ?)';

const DOC_PARAMETER = 'CAST(? AS TEXT)';

const utf8 = new TextEncoder();

/** Collection and field names become identifiers; anything else is refused rather than escaped. */
const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Declared column type of each field type; read back to know how to bind a field's values. */
const COLUMN_TYPES: Record<FieldType, string> = {
  text: 'TEXT',
  integer: 'INTEGER',
  real: 'REAL',
  boolean: 'BOOLEAN',
  json: 'JSON_TEXT',
};
const FIELD_TYPES = new Map(Object.entries(COLUMN_TYPES).map(([field, column]) => [column, field as FieldType]));

export class CollectionSchema {
  readonly insertSql: string;
  readonly updateSql: string;
  readonly deleteSql: string;
  readonly getSql: string;
  private readonly table: string;

  constructor(
    readonly name: string,
    /** Declared fields other than `id`, in column order. */
    readonly fields: ReadonlyMap<string, FieldType>,
  ) {
    this.table = quote(name);
    const columns = ['id', '_doc', ...fields.keys()].map(quote);
    // The document is bound as UTF-8 bytes and cast back to TEXT (see SqlEngine): the cheap way in.
    const values = columns.map((column) => (column === '"_doc"' ? DOC_PARAMETER : '?'));
    this.insertSql = `INSERT INTO ${this.table} (${columns.join(', ')}) VALUES (${values.join(', ')}) ON CONFLICT ("id") DO NOTHING`;
    const assignments = ['_doc', ...fields.keys()].map((column) => `${quote(column)} = ${column === '_doc' ? DOC_PARAMETER : '?'}`);
    this.updateSql = `UPDATE ${this.table} SET ${assignments.join(', ')} WHERE "id" = ?`;
    this.deleteSql = `DELETE FROM ${this.table} WHERE "id" = ?`;
    this.getSql = `SELECT "_doc" FROM ${this.table} WHERE "id" = ?`;
  }

  /**
   * `_doc` and the declared fields' values of `doc`, in column order. The document goes as its
   * UTF-8 bytes, the form both SQLite (see `SqlEngine`) and the operation log take it in.
   */
  rowValues(doc: Doc): StatementParam[] {
    const values: StatementParam[] = [utf8.encode(JSON.stringify(doc))];
    for (const [field, type] of this.fields) values.push(fieldValue(type, doc[field]));
    return values;
  }

  /** SQL conditions for `where` (empty when there are none), appending their parameters. */
  conditions(where: Where | undefined, params: StatementParam[]): string[] {
    if (!where) return [];
    return Object.entries(where).map(([field, condition]) => this.condition(this.column(field), condition, params));
  }

  selectSql(query: Query | undefined, params: SqlParam[]): string {
    const conditions = this.conditions(query?.where, params);
    const order = [...(query?.orderBy ?? []), { field: 'id', direction: 'asc' as const }]
      .map(({ field, direction }) => `${this.column(field)} ${direction === 'desc' ? 'DESC' : 'ASC'}`)
      .join(', ');
    let sql = `SELECT "_doc" FROM ${this.table}${whereSql(conditions)} ORDER BY ${order}`;
    if (query?.limit !== undefined || query?.offset !== undefined) {
      sql += ' LIMIT ? OFFSET ?';
      params.push(query.limit ?? -1, query.offset ?? 0);
    }
    return sql;
  }

  countSql(where: Where | undefined, params: SqlParam[]): string {
    return `SELECT count(*) FROM ${this.table}${whereSql(this.conditions(where, params))}`;
  }

  private column(field: string): string {
    if (field !== 'id' && !this.fields.has(field)) {
      throw new Error(`${field} is not a declared field of ${this.name}: declare it in a migration to query, order or expect on it`);
    }
    return quote(field);
  }

  private condition(column: string, condition: Condition, params: StatementParam[]): string {
    if (condition === null) return `${column} IS NULL`;
    if (typeof condition !== 'object') {
      params.push(conditionValue(condition));
      return `${column} = ?`;
    }
    if ('in' in condition) {
      if (condition.in.length === 0) return '0';
      params.push(...condition.in.map(conditionValue));
      return `${column} IN (${condition.in.map(() => '?').join(', ')})`;
    }
    if ('hasAll' in condition) {
      // One parameter (the list as JSON) and a fixed expression, however many values are asked
      // for: an expression per value grows past SQLite's expression-depth limit (a 5xx from input).
      params.push(JSON.stringify([...new Set(condition.hasAll)]));
      return (
        `(json_type(${column}) = 'array' AND NOT EXISTS (SELECT 1 FROM json_each(?) AS wanted ` +
        `WHERE NOT EXISTS (SELECT 1 FROM json_each(${column}) AS held WHERE held.value = wanted.value)))`
      );
    }
    if ('ne' in condition) {
      if (condition.ne === null) return `${column} IS NOT NULL`;
      params.push(conditionValue(condition.ne));
      return `${column} IS NOT ?`;
    }
    const [operator, value] =
      'lt' in condition ? ['<', condition.lt]
      : 'lte' in condition ? ['<=', condition.lte]
      : 'gt' in condition ? ['>', condition.gt]
      : ['>=', condition.gte];
    params.push(conditionValue(value));
    return `${column} ${operator} ?`;
  }
}

/** The collections in the database, read from its tables. */
export function loadSchema(engine: SqlEngine): Map<string, CollectionSchema> {
  const schema = new Map<string, CollectionSchema>();
  const tables = engine.all(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_%' ESCAPE '\\'`);
  for (const [table] of tables as [string][]) schema.set(table, loadCollectionSchema(engine, table));
  return schema;
}

/** One collection's schema, read from its table. */
function loadCollectionSchema(engine: SqlEngine, table: string): CollectionSchema {
  const fields = new Map<string, FieldType>();
  for (const [, column, declared] of engine.all(`PRAGMA table_info(${quote(table)})`) as [number, string, string][]) {
    const type = FIELD_TYPES.get(declared);
    if (type && column !== 'id' && column !== '_doc') fields.set(column, type);
  }
  return new CollectionSchema(table, fields);
}

/** The statements that carry out a migration on `schema`, and the schema they leave (`schema` is left as it is). */
export function migrationStatements(
  migration: Migration,
  schema: ReadonlyMap<string, CollectionSchema>,
): { statements: LoggedStatement[]; schema: Map<string, CollectionSchema> } {
  const after = new Map(schema);
  const statements: LoggedStatement[] = [];
  for (const step of migration.steps) {
    const changes = stepStatements(step, after);
    if (changes.length === 0) continue;
    statements.push(...changes);
    // Only the step's collection changed: reading every table after every step made a fresh
    // store's migrations quadratic (most of a first start's time).
    const changed = schemaAfterStep(step, after);
    after.set(changed.name, changed);
  }
  return { statements, schema: after };
}

/**
 * The schema of the collection a migration step created or changed, once `stepStatements` ran: the
 * columns those statements made, in their order (what `loadCollectionSchema` would read back),
 * without asking SQLite, which a fresh store's migrations did once a step (a statement to parse
 * and run each).
 */
export function schemaAfterStep(step: MigrationStep, schema: ReadonlyMap<string, CollectionSchema>): CollectionSchema {
  if ('createCollection' in step) {
    return new CollectionSchema(step.createCollection, new Map(Object.entries(step.fields).filter(([field]) => field !== 'id')));
  }
  if ('unindexField' in step) return schema.get(step.unindexField.collection)!;
  const { collection, field, type } = step.addField;
  return new CollectionSchema(collection, new Map([...schema.get(collection)!.fields, [field, type]]));
}

/**
 * The statements that carry out one migration step on the current schema. Steps that are already
 * in place (a collection or field that exists) need none. Only parameters vary, never the clock or
 * randomness, so replaying them gives the same result.
 */
export function stepStatements(step: MigrationStep, schema: ReadonlyMap<string, CollectionSchema>): LoggedStatement[] {
  if ('createCollection' in step) {
    const name = checkedName('collection', step.createCollection);
    if (schema.has(name)) return [];
    const fields = Object.entries(step.fields).filter(([field]) => field !== 'id');
    const columns = fields.map(([field, type]) => `, ${quote(checkedName('field', field))} ${COLUMN_TYPES[type]}`);
    return [
      [`CREATE TABLE ${quote(name)} ("id" TEXT PRIMARY KEY NOT NULL, "_doc" TEXT NOT NULL${columns.join('')})`, []],
      ...fields.flatMap(([field, type]) => indexStatements(name, field, type)),
    ];
  }
  if ('unindexField' in step) {
    const { collection, field } = step.unindexField;
    if (!schema.get(collection)?.fields.has(field)) throw new Error(`unindexField ${field}: ${collection} declares no such field`);
    // json fields have no index (see `indexStatements`), hence IF EXISTS.
    return [[`DROP INDEX IF EXISTS ${quote(`${collection}__${field}`)}`, []]];
  }
  const { collection, field, type } = step.addField;
  const existing = schema.get(collection);
  if (!existing) throw new Error(`addField ${field}: collection ${collection} does not exist`);
  if (field === 'id' || existing.fields.has(field)) return [];
  const column = quote(checkedName('field', field));
  const path = `'$.${field}'`;
  // Same values the write path stores: JSON text for json fields, scalars as they are.
  const backfill =
    type === 'json'
      ? `CASE WHEN json_type("_doc", ${path}) IS NULL OR json_type("_doc", ${path}) = 'null' THEN NULL ELSE json_quote(json_extract("_doc", ${path})) END`
      : `json_extract("_doc", ${path})`;
  return [
    [`ALTER TABLE ${quote(collection)} ADD COLUMN ${column} ${COLUMN_TYPES[type]}`, []],
    [`UPDATE ${quote(collection)} SET ${column} = ${backfill}`, []],
    ...indexStatements(collection, field, type),
  ];
}

/**
 * A field's index ends with `id`: queries filter on fields and order by id, and an index that
 * holds both serves the order as well, where one on the field alone makes SQLite sort every result
 * in a temporary B-tree (more than half of a small list's query time).
 */
function indexStatements(collection: string, field: string, type: FieldType): LoggedStatement[] {
  // json fields are matched through json_each, which an index on the column does not serve.
  if (type === 'json') return [];
  return [[createIndexSql(collection, field), []]];
}

function createIndexSql(collection: string, field: string): string {
  return `CREATE INDEX ${quote(`${collection}__${field}`)} ON ${quote(collection)} (${quote(field)}, "id")`;
}

/** Statements that rebuild field indexes made before they ended with `id` (see `indexStatements`). */
export function indexUpgradeStatements(engine: SqlEngine): LoggedStatement[] {
  const statements: LoggedStatement[] = [];
  const indexes = engine.all(`SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`) as [string, string][];
  for (const [name, collection] of indexes) {
    const columns = engine.all(`PRAGMA index_info(${quote(name)})`) as [number, number, string][];
    const field = columns[0]?.[2];
    if (columns.length !== 1 || field === undefined || name !== `${collection}__${field}`) continue;
    statements.push([`DROP INDEX ${quote(name)}`, []], [createIndexSql(collection, field), []]);
  }
  return statements;
}

function checkedName(kind: string, name: string): string {
  if (!NAME_PATTERN.test(name) || name.startsWith('sqlite_')) {
    throw new Error(`${kind} name ${JSON.stringify(name)} must be letters, digits and underscores, starting with a letter`);
  }
  return name;
}

function quote(identifier: string): string {
  return `"${identifier}"`;
}

function whereSql(conditions: string[]): string {
  return conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
}

/** A document's value as stored in its field's column; agrees with the addField backfill. */
function fieldValue(type: FieldType, value: unknown): SqlParam {
  if (value === undefined || value === null) return null;
  if (type === 'json' || typeof value === 'object') return JSON.stringify(value);
  return conditionValue(value as string | number | boolean);
}

function conditionValue(value: string | number | boolean): SqlParam {
  if (typeof value === 'boolean') return value ? 1 : 0;
  // JSON (the document and the log) has no NaN or Infinity: they are stored as null there too.
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  return value;
}
