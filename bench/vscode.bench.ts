import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeVendor } from '../packages/core/src/testing/index';
import { ensureCodeServerTools, runInCodeServer } from '../packages/vscode/test-support/code-server-runner';
import { type BenchResult, benchResult } from './bench-result';
import { median } from './child-server';

/**
 * The extension measured inside a real VS Code (code-server, as test/vscode-extension.test.ts runs
 * it; `npm run bench` builds `dist-integration/bench.js` first): its activation time, the time until
 * its language server answers a first request, and the time from sending a message in the chat
 * panel until its first token is rendered there, against the fake vendor's own time to first token
 * measured directly from this process (ROUNDS each, medians).
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const extensionPath = path.resolve(__dirname, '../packages/vscode');

export async function run(): Promise<BenchResult[]> {
  const tools = ensureCodeServerTools();
  const vendor = await startFakeVendor('openai');
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-vscode-'));
  try {
    const direct: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) direct.push(await vendorTimeToFirstToken(vendor.baseUrl, vendor.credentials.api_key!));
    let measured: { activationMs: number; firstAnswerMs: number; firstTokenMs: number[] } | undefined;
    const outcome = await runInCodeServer(tools, {
      extensionPath,
      testsPath: path.join(extensionPath, 'dist-integration/bench.js'),
      workspace,
      timeoutMs: 5 * 60_000,
      env: { RUNLOOM_TEST_OPENAI_URL: vendor.baseUrl, RUNLOOM_TEST_OPENAI_KEY: vendor.credentials.api_key!, RUNLOOM_BENCH_ROUNDS: String(ROUNDS) },
      onLog: (line) => {
        const found = /^\[runloom-bench\] (\{.*\})$/.exec(line);
        if (found) measured = JSON.parse(found[1]!) as typeof measured;
      },
    });
    if (outcome.code !== 0 || !measured) throw new Error(`the VS Code bench did not finish (exit ${outcome.code}):\n${outcome.output.slice(-4000)}`);
    const vendorFirstToken = median(direct);
    return [
      benchResult({ name: 'VS Code: extension activation', value: measured.activationMs, baseline: null, goal: { of: 'value', atMost: 100 }, unit: 'ms' }),
      benchResult({ name: 'VS Code: activation → the language server answers its first request', value: measured.firstAnswerMs, baseline: null, goal: { of: 'value', atMost: 1500 }, unit: 'ms' }),
      benchResult({
        name: 'VS Code: added time to the first token rendered in the chat panel (baseline: the fake vendor\'s own time to first token)',
        value: median(measured.firstTokenMs) - vendorFirstToken,
        baseline: vendorFirstToken,
        goal: { of: 'value', atMost: 50 },
        unit: 'ms',
      }),
    ];
  } finally {
    await vendor.close();
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

/** Milliseconds from sending a streamed chat completion to the fake until its first content delta. */
async function vendorTimeToFirstToken(baseUrl: string, apiKey: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'Say hello' }] }),
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error('the fake vendor ended without content');
    text += decoder.decode(value, { stream: true });
    if (/"content":"[^"]/.test(text)) break;
  }
  const elapsed = performance.now() - started;
  await reader.cancel();
  return elapsed;
}
