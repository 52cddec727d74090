import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openPostgresDatabase, type PostgresDatabase } from '../src/adapters/postgres/postgres-database';

/**
 * The PostgreSQL server the tests use. They fail, not skip, when it cannot be reached: CI must run
 * them. Override with RUNLOOM_TEST_DATABASE_URL.
 */
export const TEST_DATABASE_URL = process.env.RUNLOOM_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A schema of its own for one test: handles on it, and a cleanup that drops it. */
export interface TestSchema {
  schema: string;
  open(): Promise<PostgresDatabase>;
  drop(): Promise<void>;
}

export function createTestSchema(): TestSchema {
  const schema = `runloom_test_${randomBytes(6).toString('hex')}`;
  return {
    schema,
    open: () => openPostgresDatabase(TEST_DATABASE_URL, { schema, maxConnections: 4 }),
    async drop() {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
