import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { type BenchResult, benchResult } from './bench-result';
import { bootstrapFlag, type ChildServer, cpuProfileFlags, createWorkspace, fetchToken, median, startChildServer } from './child-server';

/**
 * Workspace events fanned out over SSE by `runloom serve` (the built CLI in its own process)
 * against a bare node:http server in another process doing the same fan-out, on loopback, the same
 * client code for both, the two servers taking turns (median of BENCH_ROUNDS):
 * SUBSCRIBERS clients follow the stream while WRITERS writers each upload EVENTS_PER_WRITER small
 * files one after another through the real upload route (`POST /workspace/{id}/files?path=`, raw
 * bytes), each upload publishing one `file.created` event.
 * - (a) events delivered per second (every subscriber's events counted) from the first upload
 *   until every subscriber has every event; bare: the same uploads written to a file and fsynced,
 *   then one frame written to every open stream before the answer (no store of events, no replay);
 * - (b) p99 of the time from an upload's answer (the write acknowledged) to each subscriber's
 *   receipt of its event; an event received before the answer counts as 0.
 * `BENCH_PROFILE_DIR` profiles the Runloom server.
 */

const ROOT = path.resolve(__dirname, '..');
const CLI = path.join(ROOT, 'packages/server-adapter/dist/cli.js');
const SUBSCRIBERS = Number(process.env.BENCH_EVENT_SUBSCRIBERS ?? 100);
const WRITERS = Number(process.env.BENCH_EVENT_WRITERS ?? 8);
const EVENTS_PER_WRITER = Number(process.env.BENCH_EVENTS_PER_WRITER ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CLIENT = { account: 'acct-bench', id: 'bench-workspace-events', secret: 'bench-workspace-events-secret-0123' };

/**
 * The baseline: GET opens an event stream, POST writes its body to a file (fsynced), then sends
 * one `file.created` frame to every open stream and answers 201.
 */
const BARE_SERVER = `
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const streams = new Set();
let id = 0;
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://bare');
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write('retry: 1000\\n\\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
    return;
  }
  const name = url.searchParams.get('path');
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const file = path.join(process.env.BARE_DIR, name.replace(/\\//g, '_'));
    fs.open(file, 'w', (error, fd) => {
      fs.write(fd, Buffer.concat(chunks), () => fs.fsync(fd, () => fs.close(fd, () => {
        id += 1;
        const frame = 'event: workspace-event\\nid: ' + id + '\\ndata: ' + JSON.stringify({ type: 'file.created', path: name }) + '\\n\\n';
        for (const stream of streams) stream.write(frame);
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end('{}');
      })));
    });
  });
});
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;

interface Target {
  /** The event stream's URL. */
  stream: string;
  /** The upload URL of a file at `name`. */
  upload(name: string): string;
  authorization: string;
}

interface Round {
  eventsPerSecond: number;
  p99Ms: number;
}

export async function runWorkspaceEventsBench(): Promise<BenchResult[]> {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first (npm run bench does)`);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-workspace-events-'));
  const servers: ChildServer[] = [];
  try {
    const dataDir = fs.mkdtempSync(path.join(workDir, 'data-'));
    const runloom = await startChildServer([...cpuProfileFlags(), CLI, 'serve', '--port', '0', '--data-dir', dataDir, '--rate-limit', '0', ...bootstrapFlag(CLIENT)], workDir);
    servers.push(runloom);
    const bareDir = fs.mkdtempSync(path.join(workDir, 'bare-'));
    const bare = await startChildServer(['-e', BARE_SERVER], workDir, { BARE_DIR: bareDir });
    servers.push(bare);
    const authorization = `Bearer ${await fetchToken(runloom.url, CLIENT)}`;
    const workspace = await createWorkspace(runloom.url, authorization);
    const runloomTarget: Target = {
      stream: `${runloom.url}/workspace/${workspace}/events`,
      upload: (name) => `${runloom.url}/workspace/${workspace}/files?path=${encodeURIComponent(name)}`,
      authorization,
    };
    const bareTarget: Target = { stream: bare.url, upload: (name) => `${bare.url}/?path=${encodeURIComponent(name)}`, authorization };

    const subject: Round[] = [];
    const baseline: Round[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      baseline.push(await fanOut(bareTarget, `r${round}`));
      subject.push(await fanOut(runloomTarget, `r${round}`));
    }
    const shape = `${SUBSCRIBERS} SSE subscribers, ${WRITERS} writers × ${EVENTS_PER_WRITER} uploads`;
    return [
      benchResult({
        name: `(a) workspace events delivered/s, ${shape}: runloom serve / bare node:http fan-out`,
        value: median(subject.map((result) => result.eventsPerSecond)),
        baseline: median(baseline.map((result) => result.eventsPerSecond)),
        goal: { of: 'ratio', atLeast: 0.5 },
        unit: '/s',
      }),
      benchResult({
        name: `(b) workspace events p99 from upload answered to receipt, ${shape} (baseline: bare node:http)`,
        value: median(subject.map((result) => result.p99Ms)),
        baseline: median(baseline.map((result) => result.p99Ms)),
        goal: { of: 'value', atMost: 10 },
        unit: 'ms',
      }),
    ];
  } finally {
    for (const server of servers) await server.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

export { runWorkspaceEventsBench as run };

/** One round: subscribers connect, writers upload, until every subscriber has every event. */
async function fanOut(target: Target, label: string): Promise<Round> {
  const total = WRITERS * EVENTS_PER_WRITER;
  const acknowledged = new Map<string, number>();
  const latencies: number[] = [];
  let delivered = 0;
  let allDelivered!: () => void;
  const done = new Promise<void>((resolve) => (allDelivered = resolve));
  const agent = new http.Agent({ keepAlive: true, maxSockets: SUBSCRIBERS + WRITERS });
  const subscribers = await Promise.all(
    Array.from({ length: SUBSCRIBERS }, () =>
      subscribe(target, agent, (name) => {
        const now = performance.now();
        if (!name.startsWith(`${label}/`)) return;
        const ackedAt = acknowledged.get(name);
        // Received before the writer read its answer: the event went out before the acknowledgement.
        latencies.push(ackedAt === undefined ? 0 : Math.max(0, now - ackedAt));
        delivered += 1;
        if (delivered === total * SUBSCRIBERS) allDelivered();
      }),
    ),
  );
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      for (let n = 0; n < EVENTS_PER_WRITER; n += 1) {
        const name = `${label}/w${writer}-${n}.txt`;
        await uploadSmall(target, agent, name);
        acknowledged.set(name, performance.now());
      }
    }),
  );
  await done;
  const elapsedMs = performance.now() - started;
  for (const subscriber of subscribers) subscriber.destroy();
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { eventsPerSecond: delivered / (elapsedMs / 1000), p99Ms: latencies[Math.floor(latencies.length * 0.99)]! };
}

/** Follows the stream; `onEvent` gets each event's `path`. Resolves once the stream is open. */
function subscribe(target: Target, agent: http.Agent, onEvent: (name: string) => void): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = http.get(target.stream, { agent, headers: { authorization: target.authorization, accept: 'text/event-stream' } }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`${target.stream} answered ${response.statusCode}`));
        return;
      }
      let buffered = '';
      let opened = false;
      response.setEncoding('utf8');
      response.on('data', (text: string) => {
        buffered += text;
        let end = buffered.indexOf('\n\n');
        while (end >= 0) {
          const frame = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          if (!opened) {
            opened = true;
            resolve(response);
          }
          const data = frame.split('\n').find((line) => line.startsWith('data: '));
          if (data) onEvent((JSON.parse(data.slice(6)) as { path: string }).path);
          end = buffered.indexOf('\n\n');
        }
      });
      response.on('error', () => undefined);
    });
    request.on('error', reject);
  });
}

async function uploadSmall(target: Target, agent: http.Agent, name: string): Promise<void> {
  const body = `content of ${name}\n`;
  await new Promise<void>((resolve, reject) => {
    const request = http.request(
      target.upload(name),
      { method: 'POST', agent, headers: { authorization: target.authorization, 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) } },
      (response) => {
        response.resume();
        response.on('end', () => (response.statusCode === 201 ? resolve() : reject(new Error(`upload of ${name} answered ${response.statusCode}`))));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
