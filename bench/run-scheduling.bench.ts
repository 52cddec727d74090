import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BenchResult, benchResult } from './bench-result';
import { bootstrapFlag, fetchToken, startChildServer } from './child-server';
import { FAKE_API_KEY, FAKE_MODEL, FAKE_PROMPT, startFakeVendor } from './fake-vendor';

/**
 * Runs waiting on a slow vendor (ARCHITECTURE.md, "Run scheduling"), through the built `runloom
 * serve` on its defaults against a fake vendor answering every call after 1 s:
 * (a) SLOW_RUNS async runs of one account submitted by CLIENTS clients: the time from the last
 *     acknowledged submission until every run has ended, beside the baseline of one direct call
 *     to the fake (the least any run can take);
 * (a') another account's sync run submitted half-way through: its latency, beside the same baseline;
 * (a'') the same with BIG_RUNS runs, with the server's peak RSS and its RSS per run in flight
 *     (growth over idle ÷ the most calls the fake saw at once).
 * `BENCH_SLOW_RUNS` (default 2000) and `BENCH_BIG_RUNS` (default 10000; 0 skips) set the counts.
 */

const ROOT = path.resolve(__dirname, '..');
const CLI = path.join(ROOT, 'packages/server-adapter/dist/cli.js');
const VENDOR_DELAY_MS = 1000;
const SLOW_RUNS = Number(process.env.BENCH_SLOW_RUNS ?? 2000);
const BIG_RUNS = Number(process.env.BENCH_BIG_RUNS ?? 10_000);
const CLIENTS = 64;
/** Runs must end within this after the last acknowledged submission: the bench then fails instead of hanging. */
const DEADLINE_MS = 60_000;
const BUSY = { account: 'acct-busy', id: 'bench-busy-client', secret: 'bench-busy-secret-0123456789' };
const OTHER = { account: 'acct-other', id: 'bench-other-client', secret: 'bench-other-secret-0123456789' };

interface Api {
  call(method: string, target: string, body?: unknown): Promise<{ status: number; body: unknown }>;
}

async function connect(baseUrl: string, client: typeof BUSY): Promise<Api> {
  const authorization = `Bearer ${await fetchToken(baseUrl, client)}`;
  return {
    async call(method, target, body) {
      const response = await fetch(`${baseUrl}${target}`, {
        method,
        headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
  };
}

async function expectOk(api: Api, method: string, target: string, body?: unknown): Promise<unknown> {
  const answer = await api.call(method, target, body);
  if (answer.status >= 300) throw new Error(`${method} ${target} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** Peak and current resident set of a process, in MB (Linux). */
function memoryMb(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

interface Burst {
  afterLastAckMs: number;
  otherSyncMs: number;
  maxInFlight: number;
  rssIdleMb: number;
  rssPeakMb: number;
}

export async function run(): Promise<BenchResult[]> {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first (npm run bench does)`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-sched-'));
  const fake = await startFakeVendor(dataDir, VENDOR_DELAY_MS);
  try {
    const server = await startChildServer(
      [CLI, 'serve', '--port', '0', '--data-dir', dataDir, '--rate-limit', '0', '--allow-private-network', ...bootstrapFlag(BUSY), ...bootstrapFlag(OTHER)],
      dataDir,
    );
    try {
      const busy = await connect(server.url, BUSY);
      const other = await connect(server.url, OTHER);
      const runnables: string[] = [];
      for (const api of [busy, other]) {
        await expectOk(api, 'PUT', '/v1/llm-provider/openai', { enabled: true, credentials: { api_key: FAKE_API_KEY, base_url: fake.url } });
        const runnable = (await expectOk(api, 'POST', '/v1/runnables', {
          name: 'bench slow vendor',
          config_content_parsed: { type: 'prompt', prompt: FAKE_PROMPT, llms: [{ provider: 'openai', model: FAKE_MODEL }] },
        })) as { id: string };
        runnables.push(runnable.id);
      }
      const started = performance.now();
      await fake.call();
      const directMs = performance.now() - started;

      /** Submits `count` async runs of the busy account, and one sync run of the other half-way. */
      const burst = async (count: number): Promise<Burst> => {
        const rssIdleMb = memoryMb(server.pid).rss;
        await fake.resetStats();
        let next = 0;
        let otherSync: Promise<number> | undefined;
        await Promise.all(
          Array.from({ length: CLIENTS }, async () => {
            while (next < count) {
              next += 1;
              if (next === Math.floor(count / 2)) {
                otherSync = (async () => {
                  const sent = performance.now();
                  const ran = (await expectOk(other, 'POST', `/v1/runnable/${runnables[1]}/runs?mode=sync`, {})) as { status: string };
                  if (ran.status !== 'succeeded') throw new Error(`the other account's sync run ended ${ran.status}`);
                  return performance.now() - sent;
                })();
              }
              const answer = await busy.call('POST', `/v1/runnable/${runnables[0]}/runs`, {});
              if (answer.status !== 202) throw new Error(`submitting answered ${answer.status}: ${JSON.stringify(answer.body)}`);
            }
          }),
        );
        const lastAck = performance.now();
        const deadline = Date.now() + DEADLINE_MS;
        for (;;) {
          const [queued, running] = await Promise.all(
            ['queued', 'running'].map(async (status) => (await expectOk(busy, 'GET', `/v1/runs?runnable_id=${runnables[0]}&status=${status}&limit=1`)) as unknown[]),
          );
          if (queued!.length === 0 && running!.length === 0) break;
          if (Date.now() > deadline) throw new Error(`runs still active ${DEADLINE_MS} ms after the last acknowledged submission`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const afterLastAckMs = performance.now() - lastAck;
        const failed = (await expectOk(busy, 'GET', `/v1/runs?runnable_id=${runnables[0]}&status=failed&limit=1`)) as { error: unknown }[];
        if (failed.length > 0) throw new Error(`a run failed: ${JSON.stringify(failed[0]!.error)}`);
        const otherSyncMs = await otherSync!;
        const { maxOpen } = await fake.stats();
        return { afterLastAckMs, otherSyncMs, maxInFlight: maxOpen, rssIdleMb, rssPeakMb: memoryMb(server.pid).peak };
      };

      const small = await burst(SLOW_RUNS);
      process.stderr.write(
        `  ${SLOW_RUNS} runs on a ${VENDOR_DELAY_MS} ms vendor: all ended ${small.afterLastAckMs.toFixed(0)} ms after the last ack; ` +
          `other account's sync run ${small.otherSyncMs.toFixed(0)} ms; at most ${small.maxInFlight} calls at the vendor at once\n`,
      );
      const results = [
        benchResult({
          name: `(a) ${SLOW_RUNS} async runs, 1 s vendor: last ack → all ended, beside one direct vendor call`,
          value: small.afterLastAckMs,
          baseline: directMs,
          goal: { of: 'value', atMost: 1500 },
          unit: 'ms',
        }),
        benchResult({
          name: `(a) another account's sync run submitted meanwhile, beside one direct vendor call`,
          value: small.otherSyncMs,
          baseline: directMs,
          goal: { of: 'value', atMost: 1500 },
          unit: 'ms',
        }),
      ];
      if (BIG_RUNS > 0) {
        const big = await burst(BIG_RUNS);
        const perRunKb = ((big.rssPeakMb - big.rssIdleMb) * 1024) / Math.max(1, big.maxInFlight);
        process.stderr.write(
          `  ${BIG_RUNS} runs: all ended ${big.afterLastAckMs.toFixed(0)} ms after the last ack; other account's sync run ${big.otherSyncMs.toFixed(0)} ms; ` +
            `RSS ${big.rssIdleMb.toFixed(0)} MB idle, ${big.rssPeakMb.toFixed(0)} MB peak with ${big.maxInFlight} in flight (${perRunKb.toFixed(1)} KB per run in flight)\n`,
        );
        results.push(
          benchResult({
            name: `(a) ${BIG_RUNS} async runs, 1 s vendor: last ack → all ended, beside one direct vendor call`,
            value: big.afterLastAckMs,
            baseline: directMs,
            goal: { of: 'value', atMost: 1500 },
            unit: 'ms',
          }),
          benchResult({ name: `(a) ${BIG_RUNS} runs: another account's sync run, beside one direct vendor call`, value: big.otherSyncMs, baseline: directMs, goal: { of: 'value', atMost: 1500 }, unit: 'ms' }),
          benchResult({ name: `(a) ${BIG_RUNS} runs: server peak RSS, beside its idle RSS`, value: big.rssPeakMb, baseline: big.rssIdleMb, goal: null, unit: 'MB' }),
          benchResult({ name: `(a) ${BIG_RUNS} runs: RSS per run in flight (${big.maxInFlight} at once at peak)`, value: perRunKb, baseline: null, goal: null, unit: 'KB' }),
        );
      }
      return results;
    } finally {
      await server.stop();
    }
  } finally {
    await fake.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
