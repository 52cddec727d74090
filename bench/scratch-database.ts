import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The PostgreSQL server of the benches: RUNLOOM_BENCH_DATABASE_URL, else the tests' server. */
export const BENCH_DATABASE_URL = process.env.RUNLOOM_BENCH_DATABASE_URL ?? process.env.RUNLOOM_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A connection to the bench server, or undefined (said on stderr, naming `bench`) when it cannot be reached. */
export async function connectAdmin(bench: string): Promise<pg.Client | undefined> {
  const admin = new pg.Client({ connectionString: BENCH_DATABASE_URL });
  try {
    await admin.connect();
    return admin;
  } catch (error) {
    process.stderr.write(`  ${bench}: skipped, PostgreSQL at ${BENCH_DATABASE_URL} cannot be reached (${(error as Error).message})\n`);
    return undefined;
  }
}

export interface ScratchDatabase {
  name: string;
  /** The server's URL with this database. */
  url: string;
  /** Drops it, ending the sessions still on it. */
  drop(): Promise<void>;
}

/** A new, empty database on `admin`'s server (whose URL is `serverUrl`), named `<prefix>_<random>`. */
export async function createScratchDatabase(admin: pg.Client, serverUrl: string, prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}
