import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import { type BenchResult, benchResult } from './bench-result';
import { bootstrapFlag, cpuProfileFlags, fetchToken, processCpuMs, startChildServer } from './child-server';
import { FAKE_API_KEY, FAKE_MODEL, FAKE_PROMPT, FAKE_REQUEST_BODY, startFakeVendor } from './fake-vendor';

/**
 * Runloom against its peer, side by side on one instant fake vendor:
 * (c) submit-and-wait rate with CLIENTS clients: `POST …/runs?mode=sync` on `runloom serve` with
 *     its defaults but the per-account rate limit off (`--rate-limit 0`, as every capacity bench:
 *     the default 1000 requests/s, bursts of 2000, would answer 429 once the warm-up and measured
 *     runs together pass ~1500/s), over BullMQ on its own `redis-server` (appendonly yes, appendfsync always, no
 *     snapshots; a free loopback port, a scratch dir) with a worker of concurrency 32 in its own
 *     process calling the same fake, CLIENTS clients doing `queue.add` + `job.waitUntilFinished`;
 * (b) server CPU per completed run: `runloom serve`'s, and the worker's plus Redis's for the peer.
 * Runloom's CPU is also given for its main thread alone, which bounds its rate; the stderr line also
 * gives the bench's own CPU per run on each side (its clients plus the fake vendor), the rest of the
 * machine, which both sides share (informational). Each side is warmed
 * up with `BENCH_PEER_WARMUP` (default 3000) runs before the measured `BENCH_PEER_RUNS` (default
 * 3000): V8 optimises a process's hot code on its helper threads (TurboFan, sql.js's wasm tier-up)
 * over its first few thousand runs, and after a 300-run warm-up that one-time work was ~0.45 ms of
 * the ~2 ms counted per run, with the main thread still running code not yet optimised.
 * `BENCH_PROFILE_DIR` profiles `runloom serve`.
 */

const ROOT = path.resolve(__dirname, '..');
const CLI = path.join(ROOT, 'packages/server-adapter/dist/cli.js');
const REDIS_SERVER = process.env.BENCH_REDIS_SERVER ?? '/usr/bin/redis-server';
const RUNS = Number(process.env.BENCH_PEER_RUNS ?? 3000);
const WARMUP = Number(process.env.BENCH_PEER_WARMUP ?? 3000);
const CLIENTS = 32;
const WORKER_CONCURRENCY = 32;
const CLIENT = { account: 'acct-peer', id: 'bench-peer-client', secret: 'bench-peer-secret-0123456789' };
const QUEUE = 'bench-runs';

/** The peer's worker: calls the fake vendor as a run would and answers its text. */
function workerSource(redisPort: number, vendorUrl: string): string {
  return `
const { Worker } = require('bullmq');
const body = ${JSON.stringify(FAKE_REQUEST_BODY)};
const worker = new Worker(${JSON.stringify(QUEUE)}, async () => {
  const response = await fetch(${JSON.stringify(`${vendorUrl}/v1/chat/completions`)}, {
    method: 'POST',
    headers: { authorization: 'Bearer ${FAKE_API_KEY}', 'content-type': 'application/json' },
    body,
  });
  const answer = await response.json();
  return { text: answer.choices[0].message.content };
}, { connection: { host: '127.0.0.1', port: ${redisPort} }, concurrency: ${WORKER_CONCURRENCY}, removeOnComplete: { count: 1000 } });
// startChildServer waits for this line: the worker is connected to its Redis.
worker.waitUntilReady().then(() => console.log('worker listening on http://127.0.0.1:${redisPort}'));
process.on('SIGTERM', () => worker.close().then(() => process.exit(0)));
`;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

async function startRedis(dir: string): Promise<{ port: number; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    REDIS_SERVER,
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--daemonize', 'no', '--protected-mode', 'yes'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout!.setEncoding('utf8');
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (data: string) => {
      output += data;
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', () => reject(new Error(`redis-server exited:\n${output}`)));
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await ready.finally(() => clearTimeout(timer));
  const exited = once(child, 'exit');
  return {
    port,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * JSON over node:http with keep-alive connections, one per client at most: the Runloom side's
 * clients, as lean as the peer's (ioredis on its own connections). With `fetch` (undici, WHATWG
 * streams) this process and the fake used 0.32-0.34 ms per run against the peer side's 0.14-0.15
 * (node:http: 0.10-0.12), CPU taken from the servers on a 2-core machine. The server's stop
 * closes the connections.
 */
function jsonClient(baseUrl: string, authorization: string): (method: string, target: string, body: unknown) => Promise<unknown> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  return (method, target, body) =>
    new Promise((resolve, reject) => {
      const payload = Buffer.from(JSON.stringify(body));
      const request = http.request(`${baseUrl}${target}`, { method, agent, headers: { authorization, 'content-type': 'application/json', 'content-length': payload.length } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((response.statusCode ?? 0) >= 300) reject(new Error(`${method} ${target} answered ${response.statusCode}: ${text}`));
          else {
            try {
              resolve(JSON.parse(text));
            } catch {
              reject(new Error(`${method} ${target} answered ${response.statusCode} with a body that is not JSON: ${text}`));
            }
          }
        });
      });
      request.on('error', reject);
      request.end(payload);
    });
}

/** This process's CPU (the clients) plus the fake vendor's, in ms: where the rest of the machine goes. */
function benchCpuMs(fake: { cpuMs(): number }): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000 + fake.cpuMs();
}

/** Runs `task` `count` times, CLIENTS at a time: completions per second. */
async function rate(count: number, task: () => Promise<void>): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < count) {
        next += 1;
        await task();
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

export async function run(): Promise<BenchResult[]> {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first (npm run bench does)`);
  if (!fs.existsSync(REDIS_SERVER)) throw new Error(`${REDIS_SERVER} is missing: install Debian's redis-server (apt-get install redis-server)`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-peer-'));
  const fake = await startFakeVendor(dataDir);
  try {
    // Runloom on its defaults, the rate limit off (see above).
    let runloomRate: number;
    let runloomCpuPerRun: number;
    let runloomMainThreadCpuPerRun: number;
    let runloomBenchCpuPerRun: number;
    const server = await startChildServer([...cpuProfileFlags(), CLI, 'serve', '--port', '0', '--data-dir', path.join(dataDir, 'runloom'), '--allow-private-network', '--rate-limit', '0', ...bootstrapFlag(CLIENT)], dataDir);
    try {
      const call = jsonClient(server.url, `Bearer ${await fetchToken(server.url, CLIENT)}`);
      await call('PUT', '/v1/llm-provider/openai', { enabled: true, credentials: { api_key: FAKE_API_KEY, base_url: fake.url } });
      const runnable = (await call('POST', '/v1/runnables', {
        name: 'bench peer',
        config_content_parsed: { type: 'prompt', prompt: FAKE_PROMPT, llms: [{ provider: 'openai', model: FAKE_MODEL }] },
      })) as { id: string };
      const syncRun = async (): Promise<void> => {
        const ran = (await call('POST', `/v1/runnable/${runnable.id}/runs?mode=sync`, {})) as { status: string };
        if (ran.status !== 'succeeded') throw new Error(`a sync run ended ${ran.status}`);
      };
      await rate(WARMUP, syncRun);
      const cpuBefore = server.cpuMs();
      const mainThreadCpuBefore = server.mainThreadCpuMs();
      const benchCpuBefore = benchCpuMs(fake);
      runloomRate = await rate(RUNS, syncRun);
      runloomBenchCpuPerRun = (benchCpuMs(fake) - benchCpuBefore) / RUNS;
      runloomCpuPerRun = (server.cpuMs() - cpuBefore) / RUNS;
      runloomMainThreadCpuPerRun = (server.mainThreadCpuMs() - mainThreadCpuBefore) / RUNS;
    } finally {
      await server.stop();
    }

    // The peer: BullMQ on its own Redis.
    const redisDir = path.join(dataDir, 'redis');
    fs.mkdirSync(redisDir);
    const redis = await startRedis(redisDir);
    let peerRate: number;
    let peerCpuPerRun: number;
    let peerBenchCpuPerRun: number;
    try {
      const worker = await startChildServer(['-e', workerSource(redis.port, fake.url)], dataDir);
      const connection = { host: '127.0.0.1', port: redis.port };
      const queue = new Queue(QUEUE, { connection });
      const events = new QueueEvents(QUEUE, { connection });
      // Every waiting client adds listeners to both (BullMQ's waitUntilFinished).
      queue.setMaxListeners(CLIENTS * 2);
      events.setMaxListeners(CLIENTS * 2);
      try {
        await events.waitUntilReady();
        const job = async (): Promise<void> => {
          const added = await queue.add('run', { runnable: 'bench' }, { removeOnComplete: 1000 });
          const result = (await added.waitUntilFinished(events, 30_000)) as { text: string };
          if (result.text !== 'Hello') throw new Error(`a peer job answered ${JSON.stringify(result)}`);
        };
        await rate(WARMUP, job);
        const cpuBefore = worker.cpuMs() + processCpuMs(redis.pid);
        const benchCpuBefore = benchCpuMs(fake);
        peerRate = await rate(RUNS, job);
        peerBenchCpuPerRun = (benchCpuMs(fake) - benchCpuBefore) / RUNS;
        peerCpuPerRun = (worker.cpuMs() + processCpuMs(redis.pid) - cpuBefore) / RUNS;
      } finally {
        await events.close();
        await queue.close();
        await worker.stop();
      }
    } finally {
      await redis.stop();
    }

    process.stderr.write(
      `  runloom sync runs: ${runloomRate.toFixed(0)}/s, server CPU ${runloomCpuPerRun.toFixed(2)} ms/run (main thread ${runloomMainThreadCpuPerRun.toFixed(2)}), ` +
        `bench clients + fake vendor ${runloomBenchCpuPerRun.toFixed(2)} ms/run; ` +
        `bullmq: ${peerRate.toFixed(0)}/s, worker + redis CPU ${peerCpuPerRun.toFixed(2)} ms/run, ` +
        `bench clients + fake vendor ${peerBenchCpuPerRun.toFixed(2)} ms/run\n`,
    );
    return [
      benchResult({
        name: `(c) submit-and-wait runs/s, ${CLIENTS} clients: runloom sync runs (defaults, no rate limit) / BullMQ + Redis (appendfsync always), worker concurrency ${WORKER_CONCURRENCY}`,
        value: runloomRate,
        baseline: peerRate,
        goal: { of: 'ratio', atLeast: 1 },
        unit: '/s',
      }),
      benchResult({
        name: '(b) server CPU per completed run (instant vendor): runloom serve / BullMQ worker + Redis',
        value: runloomCpuPerRun,
        baseline: peerCpuPerRun,
        goal: { of: 'value', atMost: 1.5 },
        unit: 'ms',
      }),
    ];
  } finally {
    await fake.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
