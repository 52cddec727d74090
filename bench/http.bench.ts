import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { type BenchResult, benchResult } from './bench-result';
import { bootstrapFlag, type ChildServer, cpuProfileFlags, fetchToken, startChildServer, BENCH_RUNNABLE_CONFIG as RUNNABLE_CONFIG } from './child-server';

/**
 * HTTP throughput of `runloom serve` (the built CLI, in its own process, with request logging on)
 * against a bare node:http server answering the same bytes in another process, both loaded by
 * autocannon with the same connections and duration:
 * (a) an authenticated `GET /v1/runnables` of a small list, 50 connections.
 * Durable creates (`POST /v1/runnables`) are measured in writes.bench.ts, against a baseline that
 * makes its writes durable too.
 * Rate limiting is off (`--rate-limit 0`): the bench measures capacity, not the limiter.
 * `BENCH_DURATION_S` (default 10) sets each measured run; `BENCH_PROFILE_DIR` profiles the server.
 */

const ROOT = path.resolve(__dirname, '..');
const CLI = path.join(ROOT, 'packages/server-adapter/dist/cli.js');
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP_S = 2;
const CLIENT = { account: 'acct-bench', id: 'bench-client', secret: 'bench-secret-0123456789' };
const LISTED_RUNNABLES = 5;

/** The bare baseline: node:http answering GET with the list's bytes and POST with a 201 echo. */
const BARE_SERVER = `
const http = require('node:http');
const list = process.env.BARE_LIST_BODY;
const json = { 'content-type': 'application/json; charset=utf-8' };
const server = http.createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200, { ...json, 'content-length': Buffer.byteLength(list) });
    res.end(list);
    return;
  }
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const created = JSON.stringify({ id: crypto.randomUUID(), ...JSON.parse(Buffer.concat(chunks).toString()), created_at: new Date().toISOString() });
    res.writeHead(201, { ...json, 'content-length': Buffer.byteLength(created) });
    res.end(created);
  });
});
server.listen(0, '127.0.0.1', () => console.log('bare listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;

export async function run(): Promise<BenchResult[]> {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first (npm run bench does)`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-'));
  const runloom = await startChildServer(
    [...cpuProfileFlags(), CLI, 'serve', '--port', '0', '--data-dir', dataDir, '--rate-limit', '0', ...bootstrapFlag(CLIENT)],
    dataDir,
  );
  try {
    const authorization = `Bearer ${await fetchToken(runloom.url, CLIENT)}`;
    for (let index = 0; index < LISTED_RUNNABLES; index += 1) await createRunnable(runloom.url, authorization, `listed ${index}`);
    const listed = await fetch(`${runloom.url}/v1/runnables`, { headers: { authorization } });
    if (listed.status !== 200) throw new Error(`GET /v1/runnables answered ${listed.status}: ${await listed.text()}`);
    const listBody = await listed.text();

    const bare = await startChildServer(['-e', BARE_SERVER], dataDir, { BARE_LIST_BODY: listBody });
    try {
      const get = { path: '/v1/runnables', connections: 50, headers: { authorization } };
      const listRunloom = await measure(runloom, get);
      const listBare = await measure(bare, get);
      return [
        benchResult({
          name: `(a) GET /v1/runnables (${LISTED_RUNNABLES} items, ${listBody.length} B), 50 conns: runloom serve / bare node:http`,
          value: listRunloom,
          baseline: listBare,
          goal: { of: 'ratio', atLeast: 0.4 },
          unit: 'req/s',
        }),
      ];
    } finally {
      await bare.stop();
    }
  } finally {
    await runloom.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

interface Load {
  path: string;
  connections: number;
  method?: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * Successful responses per second over DURATION_S, after a short warm-up; any failure voids the
 * figure. The server's CPU time per request is printed too: on a shared machine it moves far less
 * than the rate does.
 */
async function measure(server: ChildServer, load: Load): Promise<number> {
  const { path: target, ...options } = load;
  const baseUrl = server.url;
  await autocannon({ ...options, url: `${baseUrl}${target}`, duration: WARMUP_S });
  const cpuBefore = server.cpuMs();
  const result = await autocannon({ ...options, url: `${baseUrl}${target}`, duration: DURATION_S });
  const cpuMicrosPerRequest = ((server.cpuMs() - cpuBefore) * 1000) / Math.max(1, result['2xx']);
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${load.method ?? 'GET'} ${baseUrl}${target}: ${result.non2xx} non-2xx and ${result.errors} errors (${JSON.stringify(result.statusCodeStats)})`);
  }
  process.stderr.write(
    `  ${load.method ?? 'GET'} ${baseUrl}${target}: ${Math.round(result['2xx'] / result.duration)} req/s, latency avg ${result.latency.average} ms, p99 ${result.latency.p99} ms, ` +
      `server CPU ${Math.round(cpuMicrosPerRequest)} µs/request\n`,
  );
  return result['2xx'] / result.duration;
}

async function createRunnable(baseUrl: string, authorization: string, name: string): Promise<void> {
  const response = await fetch(`${baseUrl}/v1/runnables`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ name, config_content: RUNNABLE_CONFIG }),
  });
  if (response.status !== 201) throw new Error(`POST /v1/runnables answered ${response.status}: ${await response.text()}`);
}
