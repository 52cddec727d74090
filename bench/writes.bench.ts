import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { type BenchResult, benchResult } from './bench-result';
import { bootstrapFlag, type ChildServer, cpuProfileFlags, fetchToken, median, startChildServer, BENCH_RUNNABLE_CONFIG as RUNNABLE_CONFIG } from './child-server';

/**
 * Acknowledged durable creates (`POST /v1/runnables` answered 201) through `runloom serve` (the
 * built CLI, its own process, request log on, rate limit off), 16 connections, against a bare
 * node:http server in another process doing the least a durable create can: parse the body, make
 * it durable, answer it. Both are loaded by the same autocannon runs, alternating, ROUNDS times;
 * each figure is the median of the rounds.
 * - embedded store: the bare server appends each body to a file and acknowledges it after an
 *   fdatasync, one fdatasync shared by every body that arrived while the previous one ran (group
 *   commit, the best a log can do);
 * - PostgreSQL (`--database-url`, a schema of its own): the bare server INSERTs each body into a
 *   table of the same shape (id, json document) through a pool of 10 connections, one autocommit
 *   INSERT per request, so PostgreSQL's own group commit (concurrent commits share a WAL flush) is
 *   all it gets. Skipped when RUNLOOM_BENCH_DATABASE_URL / the test server cannot be reached.
 * `BENCH_WRITES_DURATION_S` (default 8) per measured run, `BENCH_WRITES_ROUNDS` (default 3);
 * `BENCH_PROFILE_DIR` profiles the runloom servers (`node --cpu-prof`).
 */

const ROOT = path.resolve(__dirname, '..');
const CLI = path.join(ROOT, 'packages/server-adapter/dist/cli.js');
const DURATION_S = Number(process.env.BENCH_WRITES_DURATION_S ?? 8);
const ROUNDS = Number(process.env.BENCH_WRITES_ROUNDS ?? 3);
const WARMUP_S = 2;
const CONNECTIONS = 16;
const DATABASE_URL = process.env.RUNLOOM_BENCH_DATABASE_URL ?? process.env.RUNLOOM_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** Which stores to measure: `embedded`, `postgres` or both (default). */
const STORES = (process.env.BENCH_WRITES_STORES ?? 'embedded,postgres').split(',');
const CLIENT = { account: 'acct-bench', id: 'bench-client', secret: 'bench-secret-0123456789' };
const BODY = JSON.stringify({ name: 'bench create', tags: ['bench'], config_content: RUNNABLE_CONFIG });

/** The bare embedded baseline: every body appended to a log, acknowledged after a shared fdatasync. */
const BARE_LOG_SERVER = `
const fs = require('node:fs');
const http = require('node:http');
const fd = fs.openSync(process.env.BARE_LOG_FILE, 'a');
let waiting = [];
let syncing = false;
function commit() {
  if (syncing || waiting.length === 0) return;
  const group = waiting;
  waiting = [];
  fs.writevSync(fd, group.map((entry) => entry.frame));
  syncing = true;
  fs.fdatasync(fd, (error) => {
    syncing = false;
    if (error) throw error;
    for (const entry of group) entry.ack();
    commit();
  });
}
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const created = JSON.stringify({ id: crypto.randomUUID(), ...JSON.parse(Buffer.concat(chunks).toString()), created_at: new Date().toISOString() });
    waiting.push({
      frame: Buffer.from(created + '\\n'),
      ack: () => {
        res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(created) });
        res.end(created);
      },
    });
    commit();
  });
});
server.listen(0, '127.0.0.1', () => console.log('bare listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;

/** The bare PostgreSQL baseline: one autocommit INSERT per body through a pool of 10. */
const BARE_PG_SERVER = `
const http = require('node:http');
const pg = require('pg');
const pool = new pg.Pool({ connectionString: process.env.BARE_DATABASE_URL, max: 10 });
const table = '"' + process.env.BARE_SCHEMA + '"."bare_creates"';
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const doc = { id: crypto.randomUUID(), ...JSON.parse(Buffer.concat(chunks).toString()), created_at: new Date().toISOString() };
    const created = JSON.stringify(doc);
    pool.query('INSERT INTO ' + table + ' ("id", "_doc", "account_id", "created_at") VALUES ($1, $2, $3, $4)', [doc.id, created, 'acct-bench', doc.created_at]).then(
      () => {
        res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(created) });
        res.end(created);
      },
      (error) => {
        res.writeHead(500);
        res.end(String(error));
      },
    );
  });
});
pool.query('CREATE SCHEMA IF NOT EXISTS "' + process.env.BARE_SCHEMA + '"')
  .then(() => pool.query('CREATE TABLE IF NOT EXISTS ' + table + ' ("id" text COLLATE "C" PRIMARY KEY, "_doc" json NOT NULL, "account_id" text COLLATE "C", "created_at" text COLLATE "C")'))
  .then(() => server.listen(0, '127.0.0.1', () => console.log('bare listening on http://127.0.0.1:' + server.address().port)));
process.on('SIGTERM', () => pool.end().finally(() => process.exit(0)));
`;

interface Figures {
  rate: number;
  p99Ms: number;
  cpuUsPerRequest: number;
}

export async function run(): Promise<BenchResult[]> {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first (npm run bench does)`);
  const results: BenchResult[] = [];
  if (STORES.includes('embedded')) results.push(...(await embedded()));
  if (STORES.includes('postgres')) results.push(...(await postgres()));
  return results;
}

async function embedded(): Promise<BenchResult[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-writes-'));
  try {
    const runloom = await startRunloom(dataDir, []);
    try {
      const bare = await startChildServer(['-e', BARE_LOG_SERVER], dataDir, { BARE_LOG_FILE: path.join(dataDir, 'bare.log') });
      try {
        return figures('embedded store', 'bare node:http + group-committed fdatasync', await compare(runloom, bare));
      } finally {
        await bare.stop();
      }
    } finally {
      await runloom.stop();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function postgres(): Promise<BenchResult[]> {
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  try {
    await admin.connect();
  } catch (error) {
    process.stderr.write(`  skipping the PostgreSQL write bench: ${DATABASE_URL} cannot be reached (${(error as Error).message})\n`);
    return [];
  }
  const schema = `runloom_bench_${randomBytes(6).toString('hex')}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-writes-pg-'));
  const url = new URL(DATABASE_URL);
  url.searchParams.set('schema', schema);
  try {
    const runloom = await startRunloom(dataDir, ['--database-url', url.toString()]);
    try {
      const bare = await startChildServer(['-e', BARE_PG_SERVER], dataDir, { BARE_DATABASE_URL: DATABASE_URL, BARE_SCHEMA: schema });
      try {
        return figures('PostgreSQL', 'bare node:http + one INSERT per request, pool of 10', await compare(runloom, bare));
      } finally {
        await bare.stop();
      }
    } finally {
      await runloom.stop();
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function startRunloom(dataDir: string, flags: string[]): Promise<ChildServer> {
  const profile = cpuProfileFlags();
  return startChildServer([...profile, CLI, 'serve', '--port', '0', '--data-dir', dataDir, '--rate-limit', '0', ...flags, ...bootstrapFlag(CLIENT)], dataDir);
}

/** ROUNDS alternating runs on each server; the median rate, p99 and CPU of each. */
async function compare(runloom: ChildServer, bare: ChildServer): Promise<{ runloom: Figures; bare: Figures }> {
  const authorization = `Bearer ${await fetchToken(runloom.url, CLIENT)}`;
  const rounds = { runloom: [] as Figures[], bare: [] as Figures[] };
  for (let round = 0; round < ROUNDS; round += 1) {
    rounds.runloom.push(await measure(runloom, authorization));
    rounds.bare.push(await measure(bare, authorization));
  }
  const medians = (list: Figures[]): Figures => ({
    rate: median(list.map((figures) => figures.rate)),
    p99Ms: median(list.map((figures) => figures.p99Ms)),
    cpuUsPerRequest: median(list.map((figures) => figures.cpuUsPerRequest)),
  });
  return { runloom: medians(rounds.runloom), bare: medians(rounds.bare) };
}

function figures(store: string, baseline: string, measured: { runloom: Figures; bare: Figures }): BenchResult[] {
  const what = `POST /v1/runnables durable creates, ${CONNECTIONS} conns, ${store}`;
  return [
    benchResult({
      name: `writes: ${what}: runloom serve / ${baseline}`,
      value: measured.runloom.rate,
      baseline: measured.bare.rate,
      goal: { of: 'value', atLeast: 4000 },
      unit: 'req/s',
    }),
    benchResult({
      name: `writes: p99 latency, ${what} (baseline: the same bare server)`,
      value: measured.runloom.p99Ms,
      baseline: measured.bare.p99Ms,
      goal: { of: 'value', atMost: 20 },
      unit: 'ms',
    }),
    benchResult({
      name: `writes: server CPU per create, ${store} (baseline: the same bare server)`,
      value: measured.runloom.cpuUsPerRequest,
      baseline: measured.bare.cpuUsPerRequest,
      goal: null,
      unit: 'µs',
    }),
  ];
}

/** One warmed-up autocannon run: acknowledged creates per second, p99, server CPU per create. */
async function measure(server: ChildServer, authorization: string): Promise<Figures> {
  const options = {
    url: `${server.url}/v1/runnables`,
    connections: CONNECTIONS,
    method: 'POST' as const,
    headers: { authorization, 'content-type': 'application/json' },
    body: BODY,
  };
  await autocannon({ ...options, duration: WARMUP_S });
  const cpuBefore = server.cpuMs();
  const result = await autocannon({ ...options, duration: DURATION_S });
  const cpuUsPerRequest = ((server.cpuMs() - cpuBefore) * 1000) / Math.max(1, result['2xx']);
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`POST ${options.url}: ${result.non2xx} non-2xx and ${result.errors} errors (${JSON.stringify(result.statusCodeStats)})`);
  }
  const rate = result['2xx'] / result.duration;
  process.stderr.write(`  POST ${options.url}: ${Math.round(rate)} req/s, p99 ${result.latency.p99} ms, server CPU ${Math.round(cpuUsPerRequest)} µs/request\n`);
  return { rate, p99Ms: result.latency.p99, cpuUsPerRequest };
}
