import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BenchResult, benchResult } from './bench-result';
import { bootstrapFlag, cpuProfileFlags, fetchToken, startChildServer } from './child-server';

/**
 * The run engine end to end, through the built `runloom serve` in its own process, against a
 * local fake OpenAI server (another process) that answers every chat completion at once:
 * (a) completed async runs per second (submit → succeeded) with CONCURRENCY clients submitting,
 *     over the fake's own request rate for the same prompt with the same client and concurrency;
 * (b) the median latency a sync run adds over calling the fake directly, one request at a time.
 * `BENCH_RUNS` (default 3000) sets the runs of (a); `BENCH_PROFILE_DIR` profiles the server.
 */

const ROOT = path.resolve(__dirname, '..');
const CLI = path.join(ROOT, 'packages/server-adapter/dist/cli.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 3000);
const WARMUP_RUNS = 300;
const CONCURRENCY = 16;
const LATENCY_SAMPLES = 300;
export const CLIENT = { account: 'acct-bench', id: 'bench-runs-client', secret: 'bench-runs-secret-0123456789' };
const API_KEY = 'sk-bench-0123456789abcdef';
const MODEL = 'gpt-4o-mini';
const PROMPT = { system: 'You answer in one word.', messages: [{ role: 'user', content: 'Say hello.' }] };

/**
 * A chat-completions server answering every request at once with the same short reply: one JSON
 * completion, or a stream when the body asks for one (`"stream":true`).
 */
const FAKE_OPENAI = `
const http = require('node:http');
const usage = { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 };
const fields = { id: 'chatcmpl-bench', created: 1700000000, model: '${MODEL}' };
const chunk = (more) => 'data: ' + JSON.stringify({ ...fields, object: 'chat.completion.chunk', ...more }) + '\\n\\n';
const streamed =
  chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello' }, finish_reason: null }] }) +
  chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) +
  chunk({ choices: [], usage }) +
  'data: [DONE]\\n\\n';
const whole = JSON.stringify({
  ...fields,
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, logprobs: null, finish_reason: 'stop' }],
  usage,
});
const server = http.createServer((req, res) => {
  let request = '';
  req.setEncoding('utf8');
  req.on('data', (data) => (request += data));
  req.on('end', () => {
    const stream = request.includes('"stream":true');
    const body = stream ? streamed : whole;
    res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log('fake openai listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;

export async function runRunsBench(): Promise<BenchResult[]> {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first (npm run bench does)`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-'));
  const fake = await startChildServer(['-e', FAKE_OPENAI], dataDir);
  try {
    const runloom = await startChildServer(
      [
        ...cpuProfileFlags(),
        CLI,
        'serve',
        '--port',
        '0',
        '--data-dir',
        dataDir,
        '--rate-limit',
        '0',
        '--allow-private-network',
        ...bootstrapFlag(CLIENT),
      ],
      dataDir,
    );
    try {
      const api = await connect(runloom.url);
      await api.call('PUT', '/v1/llm-provider/openai', { enabled: true, credentials: { api_key: API_KEY, base_url: fake.url } }, [200, 201]);
      const runnable = (await api.call('POST', '/v1/runnables', {
        name: 'bench hello',
        config_content_parsed: { type: 'prompt', prompt: PROMPT, llms: [{ provider: 'openai', model: MODEL }] },
      }, [201])) as { id: string };

      const submitRun = async (): Promise<void> => {
        await api.call('POST', `/v1/runnable/${runnable.id}/runs`, {}, [202]);
      };
      const callFake = async (): Promise<void> => {
        const response = await fetch(`${fake.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
          // The request a run sends: runs call the vendor without streaming.
          body: JSON.stringify({ model: MODEL, messages: [{ role: 'system', content: PROMPT.system }, ...PROMPT.messages] }),
        });
        await response.text();
      };
      const syncRun = async (): Promise<void> => {
        const run = (await api.call('POST', `/v1/runnable/${runnable.id}/runs?mode=sync`, {}, [200])) as { status: string };
        if (run.status !== 'succeeded') throw new Error(`a sync run ended ${run.status}`);
      };

      await completedRunsPerSecond(api, runnable.id, submitRun, WARMUP_RUNS);
      const serverCpuBefore = runloom.cpuMs();
      const runsPerSecond = await completedRunsPerSecond(api, runnable.id, submitRun, RUNS);
      const serverCpuPerRun = (runloom.cpuMs() - serverCpuBefore) / RUNS;
      await requestsPerSecond(callFake, WARMUP_RUNS);
      const fakeCpuBefore = fake.cpuMs();
      const fakePerSecond = await requestsPerSecond(callFake, RUNS);
      const fakeCpuPerRequest = (fake.cpuMs() - fakeCpuBefore) / RUNS;
      const syncMs = await medianMs(syncRun, LATENCY_SAMPLES);
      const directMs = await medianMs(callFake, LATENCY_SAMPLES);
      process.stderr.write(
        `  runs: ${runsPerSecond.toFixed(0)} completed/s (server CPU ${serverCpuPerRun.toFixed(2)} ms/run); ` +
          `fake: ${fakePerSecond.toFixed(0)} req/s (fake CPU ${fakeCpuPerRequest.toFixed(2)} ms/request); ` +
          `sync run median ${syncMs.toFixed(2)} ms, direct ${directMs.toFixed(2)} ms\n`,
      );
      return [
        benchResult({
          name: `(a) async runs completed/s end to end, ${CONCURRENCY} clients: runloom serve / the fake vendor's own rate`,
          value: runsPerSecond,
          baseline: fakePerSecond,
          goal: { of: 'ratio', atLeast: 0.5 },
          unit: '/s',
        }),
        benchResult({
          name: '(b) median latency a sync run adds over a direct call to the fake vendor',
          value: syncMs - directMs,
          baseline: null,
          goal: { of: 'value', atMost: 5 },
          unit: 'ms',
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

export { runRunsBench as run };

export interface Api {
  call(method: string, target: string, body: unknown, expected: number[]): Promise<unknown>;
}

export async function connect(baseUrl: string): Promise<Api> {
  const authorization = `Bearer ${await fetchToken(baseUrl, CLIENT)}`;
  return {
    async call(method, target, body, expected) {
      const response = await fetch(`${baseUrl}${target}`, {
        method,
        headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (!expected.includes(response.status)) throw new Error(`${method} ${target} answered ${response.status}: ${text}`);
      return text ? JSON.parse(text) : undefined;
    },
  };
}

/**
 * Submits `count` async runs from CONCURRENCY clients and waits until none is queued or running:
 * runs completed per second from the first submission to the last completion. Any run that did
 * not succeed voids the figure.
 */
async function completedRunsPerSecond(api: Api, runnableId: string, submitRun: () => Promise<void>, count: number): Promise<number> {
  const started = performance.now();
  await inParallel(count, submitRun);
  for (;;) {
    const [queued, running] = await Promise.all(
      ['queued', 'running'].map((status) => api.call('GET', `/v1/runs?runnable_id=${runnableId}&status=${status}&limit=1`, undefined, [200]) as Promise<unknown[]>),
    );
    if (queued!.length === 0 && running!.length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const seconds = (performance.now() - started) / 1000;
  const failed = (await api.call('GET', `/v1/runs?runnable_id=${runnableId}&status=failed&limit=1`, undefined, [200])) as { error: unknown }[];
  if (failed.length > 0) throw new Error(`a run failed: ${JSON.stringify(failed[0]!.error)}`);
  return count / seconds;
}

async function requestsPerSecond(request: () => Promise<void>, count: number): Promise<number> {
  const started = performance.now();
  await inParallel(count, request);
  return count / ((performance.now() - started) / 1000);
}

/** Runs `task` `count` times, CONCURRENCY at a time. */
async function inParallel(count: number, task: () => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        next += 1;
        await task();
      }
    }),
  );
}

async function medianMs(task: () => Promise<void>, samples: number): Promise<number> {
  for (let index = 0; index < 20; index++) await task();
  const times: number[] = [];
  for (let index = 0; index < samples; index++) {
    const started = performance.now();
    await task();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}
