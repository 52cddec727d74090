import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Migration } from '../../ports/database';
import { locateSqlWasm, type LoggedStatement, SqlEngine } from './sql-engine';
import { type CollectionSchema, CREATE_MIGRATIONS_TABLE, migrationStatements } from './sql-schema';

/**
 * Templates of fresh stores. A fresh store's migrations are ~100 CREATE statements, most of a first
 * start's time (SQLite runs each, parsing its schema again, in wasm compiled as it goes). A template
 * is the image those statements make (collections and indexes, no rows), named by a hash of them:
 * `SqlJsDatabase.migrate` loads it instead of running them when there is one for its migrations, and
 * runs them as before otherwise (a host's own migrations, a template of another version). The build
 * writes the template of the core's migrations beside the bundle (`write-code-cache.mjs`).
 */

/** Where a store looks for templates by default: beside the bundle, where the build writes them. */
export const FRESH_STORE_TEMPLATES = __dirname;

/** The migrations not yet applied (each id once), each with the statements it runs, and the schema they leave. */
export interface MigrationPlan {
  migrations: { id: string; statements: LoggedStatement[] }[];
  schema: Map<string, CollectionSchema>;
}

/** Plans `migrations` on a fresh store (nothing applied, no collection); throws what planning a step throws. */
export function planFreshStore(migrations: readonly Migration[]): MigrationPlan {
  let schema = new Map<string, CollectionSchema>();
  const planned = new Map<string, LoggedStatement[]>();
  for (const migration of migrations) {
    if (planned.has(migration.id)) continue;
    const next = migrationStatements(migration, schema);
    planned.set(migration.id, next.statements);
    schema = next.schema;
  }
  return { migrations: [...planned].map(([id, statements]) => ({ id, statements })), schema };
}

/** The file name of the template of `plan`: a hash of its statements in order. */
function templateName(plan: MigrationPlan): string {
  const statements = plan.migrations.flatMap((migration) => migration.statements);
  return `fresh-store-${createHash('sha256').update(JSON.stringify(statements)).digest('hex').slice(0, 32)}.sqlite`;
}

/** The template of `plan` in `dir`, if there is one. */
export function readFreshStoreTemplate(dir: string, plan: MigrationPlan): { file: string; image: Uint8Array } | undefined {
  const file = path.join(dir, templateName(plan));
  try {
    return { file, image: readFileSync(file) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Writes into `dir` the template of a fresh store migrated by `migrations`: their statements run on
 * a fresh database, as `openSqlJsDatabase` and `migrate` run them. Answers the file written.
 */
export async function writeFreshStoreTemplate(dir: string, migrations: readonly Migration[]): Promise<string> {
  const plan = planFreshStore(migrations);
  const engine = await SqlEngine.open(locateSqlWasm());
  try {
    engine.run(CREATE_MIGRATIONS_TABLE);
    engine.transaction(() => plan.migrations.forEach(({ statements }) => statements.forEach(([sql, params]) => engine.run(sql, params))));
    const file = path.join(dir, templateName(plan));
    writeFileSync(file, engine.export());
    return file;
  } finally {
    engine.close();
  }
}
