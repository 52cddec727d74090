import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { type BenchResult, benchResult } from './bench-result';
import { bootstrapFlag, cpuProfileFlags, fetchToken, median, startChildServer } from './child-server';

/**
 * Thread reply streams through the built `runloom serve` (its own process) against a local fake
 * OpenAI server (another process) that streams DELTAS chat-completion deltas as fast as it can:
 * (a) deltas/s a client receives through `POST /workspace/{id}/threads/stream` (the AI SDK UI
 *     message stream) over deltas/s of the same client reading the fake's stream directly; both
 *     clients parse every SSE frame's JSON, so the ratio is what Runloom's hop costs. A vendor
 *     delta is counted by its text (`word<n> `): Runloom joins the deltas of one socket read
 *     into one `text-delta` chunk;
 * (b) the median time to the first delta through Runloom minus the direct one, on short replies;
 * (c) CONCURRENT streams at once: server CPU per delta (all threads, and the main thread alone: what
 *     bounds its rate) and the server's peak RSS (reported, no goal).
 * `BENCH_THREAD_DELTAS` (default 2000), `BENCH_THREAD_CONCURRENT` (100), `BENCH_ROUNDS` (15);
 * `BENCH_PROFILE_DIR` profiles the server.
 */

const ROOT = path.join(__dirname, '..');
const CLI = path.join(ROOT, 'packages/server-adapter/dist/cli.js');
const DELTAS = Number(process.env.BENCH_THREAD_DELTAS ?? 2000);
const CONCURRENT = Number(process.env.BENCH_THREAD_CONCURRENT ?? 100);
/** A stream lasts ~10 ms, so one descheduling or GC pause moves a round by a third: the medians need more than a handful. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
/**
 * Replies on each path before measuring: a new server's heap grows to its working size over its
 * first replies (with 3, its first mark-compact, 6-13 ms, and a 5-12 ms scavenge came in the third
 * measured round in every run traced with --trace-gc), which a running server has long done.
 */
const WARM_REPLIES = 10;
const FIRST_DELTA_SAMPLES = 30;
/**
 * (b) times short replies: with DELTAS deltas in one burst, the AI SDK's stream pipeline parses the
 * whole first socket read (hundreds of events) before its first part comes out, which would
 * measure the burst, not the hop (a real vendor spaces its deltas).
 */
const SHORT_DELTAS = 5;
const SHORT_PROMPT = 'Say five words.';
const LONG_PROMPT = 'Say many words.';
const MODEL = 'gpt-4o-mini';
const API_KEY = 'sk-bench-threads-0123456789abcdef';
const CLIENT = { account: 'acct-bench', id: 'bench-threads-client', secret: 'bench-threads-secret-0123456789' };

/** Chat-completions SSE: every chunk written at once, waiting only for the socket to drain. */
const FAKE_OPENAI = `
const http = require('node:http');
const chunk = (delta, finish) => 'data: ' + JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1700000000, model: '${MODEL}',
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] }) + '\\n\\n';
const reply = (deltas) => {
  const events = [chunk({ role: 'assistant', content: '' }, null)];
  for (let i = 0; i < deltas; i++) events.push(chunk({ content: 'word' + i + ' ' }, null));
  events.push(chunk({}, 'stop'));
  events.push('data: ' + JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1700000000, model: '${MODEL}', choices: [],
    usage: { prompt_tokens: 12, completion_tokens: deltas, total_tokens: deltas + 12 } }) + '\\n\\n');
  events.push('data: [DONE]\\n\\n');
  return events;
};
const long = reply(${DELTAS});
const short = reply(${SHORT_DELTAS});
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (bytes) => (body += bytes));
  req.on('end', async () => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const event of body.includes('${SHORT_PROMPT}') ? short : long) {
      if (!res.write(event)) await new Promise((resolve) => res.once('drain', resolve));
    }
    res.end();
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', 4096, () => console.log('fake openai listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;

/** What one streamed answer gave its client: the deltas counted, when the first and the last arrived, and when it ended. */
interface StreamTiming {
  deltas: number;
  firstDeltaMs: number;
  lastDeltaMs: number;
  totalMs: number;
}

/** One vendor delta's text, as the fake writes it. */
const VENDOR_DELTA = /word\d+ /g;

export async function runThreadStreamsBench(): Promise<BenchResult[]> {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first (npm run bench does)`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-threads-'));
  const fake = await startChildServer(['-e', FAKE_OPENAI], dataDir);
  try {
    const runloom = await startChildServer(
      [...cpuProfileFlags(), CLI, 'serve', '--port', '0', '--data-dir', dataDir, '--rate-limit', '0', '--allow-private-network', ...bootstrapFlag(CLIENT)],
      dataDir,
    );
    try {
      const token = await fetchToken(runloom.url, CLIENT);
      const call = async (method: string, requestPath: string, body: unknown): Promise<any> => {
        const response = await fetch(`${runloom.url}${requestPath}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (response.status >= 300) throw new Error(`${method} ${requestPath} answered ${response.status}: ${await response.text()}`);
        return response.json();
      };
      await call('PUT', '/v1/llm-provider/openai', { enabled: true, credentials: { api_key: API_KEY, base_url: fake.url } });
      const workspaceId = ((await call('POST', '/workspaces', { name: 'bench threads' })) as { data: { id: string } }).data.id;
      let threads = 0;
      /** A new empty thread for each stream, so every reply costs the same (no growing history). */
      const newThread = async (): Promise<string> => {
        const threadId = `bench-${++threads}`;
        await call('POST', `/workspace/${workspaceId}/thread/${threadId}/save`, {});
        return threadId;
      };
      const throughRunloom = async (prompt = LONG_PROMPT): Promise<StreamTiming> => {
        const threadId = await newThread();
        return timeStream(`${runloom.url}/workspace/${workspaceId}/threads/stream`, { authorization: `Bearer ${token}` }, {
          threadId,
          message: prompt,
          model: { provider: 'openai', model: MODEL },
        }, uiTextDeltas);
      };
      const direct = (prompt = LONG_PROMPT): Promise<StreamTiming> =>
        timeStream(`${fake.url}/v1/chat/completions`, { authorization: `Bearer ${API_KEY}` }, {
          model: MODEL,
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: prompt }],
        }, chatCompletionDeltas);

      // Warm both paths (the server loads the AI SDK bundle on its first model call).
      for (let warm = 0; warm < WARM_REPLIES; warm += 1) {
        await throughRunloom();
        await direct();
      }
      const viaRunloom: number[] = [];
      const viaDirect: number[] = [];
      // Reported beside (a), no goal: the rate between the first and the last delta, without the fixed cost per request that (b) measures.
      const flowRunloom: number[] = [];
      const flowDirect: number[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        const directTiming = await direct();
        viaDirect.push(deltasPerSecond(directTiming));
        flowDirect.push(flowingDeltasPerSecond(directTiming));
        const runloomTiming = await throughRunloom();
        viaRunloom.push(deltasPerSecond(runloomTiming));
        flowRunloom.push(flowingDeltasPerSecond(runloomTiming));
      }
      const firstRunloom: number[] = [];
      const firstDirect: number[] = [];
      for (let sample = 0; sample < FIRST_DELTA_SAMPLES; sample += 1) {
        firstDirect.push((await direct(SHORT_PROMPT)).firstDeltaMs);
        firstRunloom.push((await throughRunloom(SHORT_PROMPT)).firstDeltaMs);
      }

      const threadIds = await Promise.all(Array.from({ length: CONCURRENT }, () => newThread()));
      const cpuBefore = runloom.cpuMs();
      const mainThreadCpuBefore = runloom.mainThreadCpuMs();
      let peakRssKb = rssKb(runloom.pid);
      const sampler = setInterval(() => (peakRssKb = Math.max(peakRssKb, rssKb(runloom.pid))), 20);
      const started = performance.now();
      const concurrent = await Promise.all(
        threadIds.map((threadId) =>
          timeStream(`${runloom.url}/workspace/${workspaceId}/threads/stream`, { authorization: `Bearer ${token}` }, {
            threadId,
            message: LONG_PROMPT,
            model: { provider: 'openai', model: MODEL },
          }, uiTextDeltas),
        ),
      );
      const wallMs = performance.now() - started;
      clearInterval(sampler);
      const delivered = concurrent.reduce((sum, timing) => sum + timing.deltas, 0);
      if (delivered !== CONCURRENT * DELTAS) throw new Error(`${delivered} deltas arrived of ${CONCURRENT * DELTAS}`);
      const cpuPerDeltaUs = ((runloom.cpuMs() - cpuBefore) * 1000) / delivered;
      const mainThreadCpuPerDeltaUs = ((runloom.mainThreadCpuMs() - mainThreadCpuBefore) * 1000) / delivered;
      process.stderr.write(
        `  threads: ${median(viaRunloom).toFixed(0)} deltas/s through runloom, ${median(viaDirect).toFixed(0)} direct ` +
          `(first to last delta: ${median(flowRunloom).toFixed(0)} vs ${median(flowDirect).toFixed(0)}); ` +
          `first delta ${median(firstRunloom).toFixed(2)} ms vs ${median(firstDirect).toFixed(2)} ms; ` +
          `${CONCURRENT} streams: ${((delivered / wallMs) * 1000).toFixed(0)} deltas/s in all, ${cpuPerDeltaUs.toFixed(1)} µs server CPU/delta (${mainThreadCpuPerDeltaUs.toFixed(1)} on its main thread), peak RSS ${(peakRssKb / 1024).toFixed(0)} MB\n`,
      );
      return [
        benchResult({
          name: `thread streams (a): deltas/s reaching the client, ${DELTAS} deltas: through runloom serve / reading the fake vendor directly`,
          value: median(viaRunloom),
          baseline: median(viaDirect),
          goal: { of: 'ratio', atLeast: 0.8 },
          unit: '/s',
        }),
        benchResult({
          name: `thread streams (b): median time to the first delta that runloom adds over a direct call (${SHORT_DELTAS}-delta replies)`,
          value: median(firstRunloom) - median(firstDirect),
          baseline: null,
          goal: { of: 'value', atMost: 5 },
          unit: 'ms',
        }),
        benchResult({
          name: `thread streams (c): server CPU per delta, ${CONCURRENT} streams at once`,
          value: cpuPerDeltaUs,
          baseline: null,
          goal: null,
          unit: 'µs',
        }),
        benchResult({
          name: `thread streams (c): server main-thread CPU per delta, ${CONCURRENT} streams at once`,
          value: mainThreadCpuPerDeltaUs,
          baseline: null,
          goal: null,
          unit: 'µs',
        }),
        benchResult({
          name: `thread streams (c): server peak RSS, ${CONCURRENT} streams at once`,
          value: peakRssKb / 1024,
          baseline: null,
          goal: null,
          unit: 'MB',
        }),
      ];
    } finally {
      await runloom.stop();
    }
  } finally {
    await fake.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export { runThreadStreamsBench as run };

/** POSTs `body` and reads the SSE answer, parsing each frame's JSON as a client does; `deltasIn` counts the vendor deltas a frame carries. */
async function timeStream(url: string, headers: Record<string, string>, body: unknown, deltasIn: (data: any) => number): Promise<StreamTiming> {
  const started = performance.now();
  const response = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (response.status !== 200) throw new Error(`POST ${url} answered ${response.status}: ${await response.text()}`);
  const decoder = new TextDecoder();
  let buffered = '';
  let deltas = 0;
  let firstDeltaMs = 0;
  let lastDeltaMs = 0;
  const reader = response.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n\n')) !== -1) {
      const frame = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = frame.split('\n').find((line) => line.startsWith('data: '))?.slice('data: '.length);
      if (data === undefined || data === '[DONE]') continue;
      const carried = deltasIn(JSON.parse(data));
      if (carried > 0) {
        lastDeltaMs = performance.now() - started;
        if (deltas === 0) firstDeltaMs = lastDeltaMs;
      }
      deltas += carried;
    }
  }
  return { deltas, firstDeltaMs, lastDeltaMs, totalMs: performance.now() - started };
}

function uiTextDeltas(chunk: { type?: string; delta?: string }): number {
  return chunk.type === 'text-delta' ? countDeltas(chunk.delta) : 0;
}

function chatCompletionDeltas(chunk: { choices?: { delta?: { content?: string } }[] }): number {
  return countDeltas(chunk.choices?.[0]?.delta?.content);
}

function countDeltas(text: string | undefined): number {
  return text ? (text.match(VENDOR_DELTA)?.length ?? 0) : 0;
}

function deltasPerSecond(timing: StreamTiming): number {
  if (timing.deltas !== DELTAS) throw new Error(`${timing.deltas} deltas arrived of ${DELTAS}`);
  return (timing.deltas / timing.totalMs) * 1000;
}

/** The deltas after the first over the time from the first to the last. */
function flowingDeltasPerSecond(timing: StreamTiming): number {
  return ((timing.deltas - 1) / Math.max(timing.lastDeltaMs - timing.firstDeltaMs, 0.001)) * 1000;
}

/** Resident set size of a process, in KB (Linux; 0 elsewhere). */
function rssKb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
