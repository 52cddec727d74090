import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CALLBACK_CONCURRENCY } from '../packages/core/src/domain/webhooks/callback-dispatcher';
import { CallbackDispatcher, createRunloom, JobQueue, type Runloom, RunRepository, type RunRecord } from '../packages/core/src/index';
import { runRecord } from '../test/fixtures/run-records';
import { type BenchResult, benchResult } from './bench-result';
import { median } from './child-server';

/**
 * (c) Run-completion callbacks delivered per second to a local sink, against a baseline of plain
 * signed POSTs per second from a tight loop to the same sink at the same concurrency.
 *
 * Runloom: DELIVERIES finished runs are written first; the clock runs from the first `schedule`
 * until the sink has counted every delivery. Each delivery is a durable job (enqueue, claim,
 * finish) on the embedded sql.js store, a read of the run and of the account's sealed secret, a
 * WebCrypto HMAC, the guarded POST and a conditional write of the run's callback state.
 * Baseline: CALLBACK_CONCURRENCY loops that each build the same body, sign it with node:crypto and
 * POST it over a keep-alive agent, awaiting each answer. The sink runs in its own process and
 * answers 204 at once, so it costs neither side. Each figure is the median of ROUNDS rounds, the
 * two sides taking turns.
 */

const DELIVERIES = Number(process.env.BENCH_CALLBACKS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const SINK = `
const http = require('node:http');
let received = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET') { res.end(String(received)); return; }
  req.resume();
  req.on('end', () => { received += 1; res.writeHead(204); res.end(); });
});
server.listen(0, '127.0.0.1', () => console.log('sink listening on ' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;

export async function runCallbacksBench(): Promise<BenchResult[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-callbacks-'));
  const sink = await startSink();
  const runloom = await createRunloom({ dataDir, allowPrivateNetwork: true });
  try {
    const sampleRun = runRecord();
    const body = JSON.stringify({ type: 'run.completed', timestamp: sampleRun.completed_at, data: sampleRun });
    const baselines: number[] = [];
    const values: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      baselines.push(await plainSignedPosts(sink.port, body));
      values.push(await runloomDeliveries(sink.port, runloom));
    }
    const deliveries = median(values);
    const baseline = median(baselines);
    return [
      benchResult({
        name: `callbacks: deliveries/s to a local sink, ${CALLBACK_CONCURRENCY} in flight (baseline: plain signed POSTs from a tight loop)`,
        value: deliveries,
        baseline,
        // A regression guard: durable, signed and recorded deliveries at no less than a sixth of bare POSTs.
        goal: { of: 'ratio', atLeast: 1 / 6 },
        unit: '/s',
      }),
    ];
  } finally {
    await runloom.close();
    sink.process.kill('SIGTERM');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export { runCallbacksBench as run };

interface Sink {
  process: ChildProcess;
  port: number;
}

async function startSink(): Promise<Sink> {
  const child = spawn(process.execPath, ['-e', SINK], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  const port = Number(/sink listening on (\d+)/.exec(line.toString())?.[1]);
  if (!port) throw new Error(`the sink did not start: ${line.toString()}`);
  return { process: child, port };
}

async function received(port: number): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/count`);
  return Number(await response.text());
}

/** POSTs per second: each loop signs (Standard Webhooks) and sends, awaiting the answer. */
async function plainSignedPosts(port: number, body: string): Promise<number> {
  const agent = new http.Agent({ keepAlive: true });
  const key = randomBytes(32);
  let sent = 0;
  const post = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const id = `msg_${sent}`;
      const timestamp = Math.floor(Date.now() / 1000).toString();
      const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
      const request = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/hook',
          agent,
          headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` },
        },
        (response) => {
          response.resume();
          response.on('end', resolve);
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CALLBACK_CONCURRENCY }, async () => {
      while (sent < DELIVERIES) {
        sent += 1;
        await post();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return DELIVERIES / seconds;
}

/** Deliveries per second through `CallbackDispatcher.schedule`, until every job is done and recorded. */
async function runloomDeliveries(port: number, runloom: Runloom): Promise<number> {
  const repository = runloom.container.get(RunRepository);
  const callbacks = await runloom.container.getAsync(CallbackDispatcher);
  const queue = runloom.container.get<JobQueue>(JobQueue);
  const url = `http://127.0.0.1:${port}/hook`;
  const runs: RunRecord[] = Array.from({ length: DELIVERIES }, () => runRecord({ account_id: 'acct-bench', callback: CallbackDispatcher.pending(url) }));
  for (let index = 0; index < runs.length; index += 100) await Promise.all(runs.slice(index, index + 100).map((run) => repository.insert(run)));
  // The account's secret exists before the clock starts, as it would in a running service.
  await runloom.webhooks.get('acct-bench');

  const before = await received(port);
  const started = performance.now();
  await Promise.all(runs.map((run) => callbacks.schedule(run)));
  while ((await queue.depth()) > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  const seconds = (performance.now() - started) / 1000;

  const delivered = (await received(port)) - before;
  const last = await repository.get('acct-bench', runs[runs.length - 1]!.id);
  if (delivered !== DELIVERIES || last?.callback?.status !== 'delivered') {
    throw new Error(`the sink got ${delivered} of ${DELIVERIES} callbacks; the last run's callback: ${JSON.stringify(last?.callback)}`);
  }
  return DELIVERIES / seconds;
}
