import { closeSync, fdatasync, mkdtempSync, openSync, rmSync, statSync, write } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { readSnapshot, SNAPSHOT_FILE } from '../packages/core/src/adapters/sqljs/snapshot-file';
import { locateSqlWasm, SqlEngine } from '../packages/core/src/adapters/sqljs/sql-engine';
import { openSqlJsDatabase, type SqlJsDatabase } from '../packages/core/src/adapters/sqljs/sqljs-database';
import type { Doc, Migration } from '../packages/core/src/ports/database';
import { type BenchResult, benchResult } from './bench-result';
import { percentile } from './child-server';

/**
 * The embedded store (sql.js + operation log) at the Database port, in this process:
 * - durable writes/s from 16 concurrent writers, against the same disk doing one fdatasync per
 *   write (what the writes would cost without group commit);
 * - (c) the median cost of one durable write in a 100 MB database over a 1 MB one, writes
 *   alternating between the two so both see the same disk and CPU;
 * - the p99 write latency at 100 MB with 16 writers while snapshots are taken back to back,
 *   against the same load without snapshots; the longest event-loop stall in both; and, for scale,
 *   how long one export() of that database blocks the thread that calls it.
 * The HTTP-level creates/s goal is measured through the server in http.bench.ts.
 */

const WRITERS = 16;
const THROUGHPUT_MS = Number(process.env.BENCH_STORE_THROUGHPUT_MS ?? 4000);
const LATENCY_MS = Number(process.env.BENCH_STORE_LATENCY_MS ?? 8000);
const SEQUENTIAL_WRITES = 400;
const SMALL_BYTES = 1024 * 1024;
const BIG_BYTES = 100 * 1024 * 1024;
/** Stored bytes per filler document, indexes included (checked against the snapshot's size). */
const BYTES_PER_DOC = 1300;

const RECORDS = 'records';
const migrations: Migration[] = [
  {
    id: 'bench/001-records',
    steps: [{ createCollection: RECORDS, fields: { account_id: 'text', status: 'text', created_at: 'text', tags: 'json' } }],
  },
];
const BODY = 'lorem ipsum dolor sit amet '.repeat(34);

function record(id: string): Doc {
  return { id, account_id: `acct-${id.length % 7}`, status: 'queued', created_at: new Date().toISOString(), tags: ['bench', 'store'], body: BODY };
}

export async function runStoreBench(): Promise<BenchResult[]> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-store-'));
  try {
    const writesPerSecond = await throughput(path.join(root, 'throughput'));
    const fsyncPerWrite = await fsyncPerWriteRate(path.join(root, 'raw.log'));

    const small = await filledStore(path.join(root, 'small'), SMALL_BYTES);
    const big = await filledStore(path.join(root, 'big'), BIG_BYTES);
    const sequential = await alternatingWrites(small.database, big.database);
    await small.database.close();

    const quiet = await concurrentLatency(big.database, false);
    const snapshotting = await concurrentLatency(big.database, true);
    await big.database.close();
    const exportStallMs = await mainThreadExportMs(path.join(root, 'big'));

    const mb = (bytes: number): string => `${Math.round(bytes / (1024 * 1024))} MB`;
    return [
      benchResult({
        name: `store: durable writes/s, ${WRITERS} concurrent writers (baseline: fdatasync per write, no group commit)`,
        value: writesPerSecond,
        baseline: fsyncPerWrite,
        goal: { of: 'value', atLeast: 4000 },
        unit: '/s',
      }),
      benchResult({
        name: `store: median durable write, ${mb(big.bytes)} db (baseline: ${mb(small.bytes)} db)`,
        value: sequential.bigTotalMs,
        baseline: sequential.smallTotalMs,
        goal: { of: 'ratio', atMost: 1.5 },
        unit: 'ms',
      }),
      benchResult({
        name: `store: median main-thread time per write, ${mb(big.bytes)} db (baseline: ${mb(small.bytes)} db)`,
        value: sequential.bigMainThreadUs,
        baseline: sequential.smallMainThreadUs,
        goal: { of: 'ratio', atMost: 1.5 },
        unit: 'µs',
      }),
      benchResult({
        name: `store: p99 write latency at ${mb(big.bytes)}, ${WRITERS} writers, ${snapshotting.snapshots} snapshots taken (baseline: no snapshots)`,
        value: snapshotting.p99Ms,
        baseline: quiet.p99Ms,
        goal: { of: 'value', atMost: 50 },
        unit: 'ms',
      }),
      benchResult({
        name: `store: longest event-loop stall at ${mb(big.bytes)} while snapshots run (baseline: same writes, no snapshots)`,
        value: snapshotting.maxStallMs,
        baseline: quiet.maxStallMs,
        goal: null,
        unit: 'ms',
      }),
      benchResult({
        name: `store: event-loop block of one export() of ${mb(big.bytes)} on the main thread (what the worker replica avoids)`,
        value: exportStallMs,
        baseline: null,
        goal: null,
        unit: 'ms',
      }),
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

export { runStoreBench as run };

async function openStore(dir: string): Promise<SqlJsDatabase> {
  const database = await openSqlJsDatabase({ dir });
  await database.migrate(migrations);
  return database;
}

/** Acknowledged writes per second from concurrent writers, each waiting for its write. */
async function throughput(dir: string): Promise<number> {
  const database = await openStore(dir);
  let written = 0;
  const started = performance.now();
  const until = started + THROUGHPUT_MS;
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      for (let index = 0; performance.now() < until; index += 1) {
        await database.write([{ op: 'insert', collection: RECORDS, doc: record(`t-${writer}-${index}`) }]);
        written += 1;
      }
    }),
  );
  const rate = written / ((performance.now() - started) / 1000);
  await database.close();
  return rate;
}

/** The same concurrency appending to a plain file with one fdatasync per write. */
async function fsyncPerWriteRate(file: string): Promise<number> {
  const fd = openSync(file, 'a');
  const frame = Buffer.from(JSON.stringify(record('raw-frame')));
  const writeAsync = promisify(write);
  const syncAsync = promisify(fdatasync);
  let written = 0;
  const started = performance.now();
  const until = started + THROUGHPUT_MS;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (performance.now() < until) {
        await writeAsync(fd, frame);
        await syncAsync(fd);
        written += 1;
      }
    }),
  );
  closeSync(fd);
  return written / ((performance.now() - started) / 1000);
}

/** A store filled to about `bytes` through batches of 1,000 documents; `bytes` is measured. */
async function filledStore(dir: string, bytes: number): Promise<{ database: SqlJsDatabase; bytes: number }> {
  const database = await openStore(dir);
  const documents = Math.ceil(bytes / BYTES_PER_DOC);
  for (let start = 0; start < documents; start += 1000) {
    const batch = Array.from({ length: Math.min(1000, documents - start) }, (_, offset) => ({
      op: 'insert' as const,
      collection: RECORDS,
      doc: record(`fill-${start + offset}`),
    }));
    await database.write(batch);
  }
  await database.snapshot();
  return { database, bytes: statSync(path.join(dir, SNAPSHOT_FILE)).size };
}

/** One writer, alternating between the stores: medians of the whole write and of its synchronous part. */
async function alternatingWrites(small: SqlJsDatabase, big: SqlJsDatabase) {
  const samples = { small: { total: [] as number[], main: [] as number[] }, big: { total: [] as number[], main: [] as number[] } };
  for (let index = 0; index < SEQUENTIAL_WRITES; index += 1) {
    for (const [name, database] of [['small', small], ['big', big]] as const) {
      const started = performance.now();
      const durable = database.write([{ op: 'insert', collection: RECORDS, doc: record(`seq-${index}`) }]);
      const applied = performance.now();
      await durable;
      samples[name].main.push((applied - started) * 1000);
      samples[name].total.push(performance.now() - started);
    }
  }
  return {
    smallTotalMs: percentile(samples.small.total, 0.5),
    bigTotalMs: percentile(samples.big.total, 0.5),
    smallMainThreadUs: percentile(samples.small.main, 0.5),
    bigMainThreadUs: percentile(samples.big.main, 0.5),
  };
}

/** Per-write latencies of concurrent writers, optionally while snapshots run back to back. */
async function concurrentLatency(database: SqlJsDatabase, withSnapshots: boolean) {
  const latencies: number[] = [];
  const stalls = monitorEventLoopDelay({ resolution: 5 });
  let snapshots = 0;
  let done = false;
  const until = performance.now() + LATENCY_MS;
  const tag = withSnapshots ? 'snap' : 'quiet';
  stalls.enable();
  const snapshotter = (async () => {
    while (withSnapshots && !done) {
      await database.snapshot();
      snapshots += 1;
    }
  })();
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      for (let index = 0; performance.now() < until; index += 1) {
        const started = performance.now();
        await database.write([{ op: 'insert', collection: RECORDS, doc: record(`${tag}-${writer}-${index}`) }]);
        latencies.push(performance.now() - started);
      }
    }),
  );
  done = true;
  await snapshotter;
  stalls.disable();
  return { p99Ms: percentile(latencies, 0.99), maxStallMs: stalls.max / 1e6, snapshots };
}

/** How long the naive design (export() on the main thread) blocks, on the same database image. */
async function mainThreadExportMs(dir: string): Promise<number> {
  const snapshot = readSnapshot(dir);
  if (!snapshot) throw new Error(`no snapshot in ${dir}`);
  const engine = await SqlEngine.open(locateSqlWasm(), snapshot.image);
  const started = performance.now();
  engine.export();
  const elapsed = performance.now() - started;
  engine.close();
  return elapsed;
}
