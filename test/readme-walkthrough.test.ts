import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { CallbackSink } from './support/callback-sink';

const ROOT = path.resolve(__dirname, '..');
const README = path.join(ROOT, 'README.md');
const LISTENING = /^runloom listening on (http:\/\/127\.0\.0\.1:\d+)$/m;

/** The README's walk-through: the `serve` command it starts the server with, and the sh blocks between the markers. */
function readmeWalkthrough(): { serve: string; blocks: string[] } {
  const readme = fs.readFileSync(README, 'utf8');
  const section = readme.split('\n## Walk-through with curl\n')[1]?.split('\n## ')[0];
  if (!section) throw new Error("README.md has no '## Walk-through with curl' section");
  const serve = section.match(/^node packages\/server-adapter\/dist\/cli\.js serve .*$/m)?.[0];
  if (!serve) throw new Error('the walk-through shows no `node packages/server-adapter/dist/cli.js serve …` line');
  const marked = section.split('<!-- walkthrough:begin')[1]?.split('<!-- walkthrough:end')[0];
  if (!marked) throw new Error('the walk-through has no walkthrough:begin … walkthrough:end markers');
  const blocks = [...marked.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((found) => found[1]!);
  if (blocks.length === 0) throw new Error('no ```sh block between the walk-through markers');
  return { serve, blocks };
}

/** Resolves with all output so far once `pattern` appears on the child's stdout; rejects if it exits first. */
function outputLine(child: ChildProcess, output: () => string, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const found = pattern.exec(output());
      if (!found) return;
      child.stdout!.off('data', check);
      child.off('exit', onExit);
      resolve(found);
    };
    const onExit = (code: number | null): void => reject(new Error(`exited with ${code} before printing ${pattern}:\n${output()}`));
    child.stdout!.on('data', check);
    child.once('exit', onExit);
    check();
  });
}

/**
 * README.md's walk-through, pasted as a new user would: the server started with the README's own
 * command line, then every sh block of the walk-through in one bash, in order. The README's public
 * defaults are swapped for loopback through the variables its blocks already read: RUNLOOM_URL,
 * OPENAI_API_KEY, OPENAI_BASE_URL (a fake OpenAI) and CALLBACK_URL (a sink), all let in with
 * RUNLOOM_EGRESS_ALLOW.
 */
describe('the README walk-through, run as written', function () {
  this.timeout(60_000);
  let dataDir: string;
  let workDir: string;
  let vendor: FakeVendorServer;
  let sink: CallbackSink;
  let server: ChildProcess | undefined;

  before(async () => {
    for (const tool of ['bash', 'curl', 'jq']) {
      try {
        execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
      } catch {
        throw new Error(`the walk-through needs ${tool} on the PATH (.ci/run installs jq)`);
      }
    }
    // The current sources, bundled as the bin ships them (what the README's `npm run build` does first).
    execFileSync(process.execPath, ['esbuild.mjs'], { cwd: ROOT, stdio: 'inherit' });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-readme-data-'));
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-readme-cwd-'));
    vendor = await startFakeVendor('openai');
    sink = await CallbackSink.start();
  });

  after(async () => {
    if (server && server.exitCode === null && server.signalCode === null) {
      server.kill('SIGKILL');
      await once(server, 'exit');
    }
    await vendor?.close();
    await sink?.close();
    for (const dir of [dataDir, workDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('gets a token, configures the provider, creates a runnable and a resource, runs it, the signed callback arrives, and makes a workspace', async () => {
    const { serve, blocks } = readmeWalkthrough();
    const vendorUrl = new URL(vendor.baseUrl);
    const sinkUrl = new URL(sink.url);
    let serverOutput = '';
    server = spawn('bash', ['-c', `exec ${serve}`], {
      cwd: ROOT,
      env: {
        ...process.env,
        RUNLOOM_PORT: '0',
        RUNLOOM_DATA_DIR: dataDir,
        RUNLOOM_EGRESS_ALLOW: `${vendorUrl.host},${sinkUrl.host}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout!.setEncoding('utf8').on('data', (chunk: string) => (serverOutput += chunk));
    server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (serverOutput += chunk));
    const [, url] = await outputLine(server, () => serverOutput, LISTENING);

    // Each block's output is told apart by a line of its own before it.
    const script = ['set -euo pipefail', ...blocks.flatMap((block, index) => [`echo '::block ${index}'`, block])].join('\n');
    const shell = spawn('bash', ['-c', script], {
      cwd: workDir,
      env: {
        ...process.env,
        RUNLOOM_URL: url!,
        OPENAI_API_KEY: vendor.credentials.api_key!,
        OPENAI_BASE_URL: `${vendor.baseUrl}/v1`,
        CALLBACK_URL: sink.url,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    shell.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    shell.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const [code] = (await once(shell, 'exit')) as [number | null];
    const context = `\n--- stdout\n${stdout}\n--- stderr\n${stderr}\n--- server\n${serverOutput.slice(-4000)}`;
    assert.equal(code, 0, `the walk-through's shell exited with ${code}${context}`);

    const printed = stdout.split(/^::block \d+\n/m).slice(1);
    assert.equal(printed.length, blocks.length, context);
    const all = printed.join('');
    assert.match(all, /^token: eyJ\S{13}…$/m, `no token${context}`);
    const provider = JSON.parse(printed.find((output) => output.includes('"provider"')) ?? 'null') as { provider?: string; enabled?: boolean } | null;
    assert.equal(provider?.provider, 'openai', `the provider was not configured${context}`);
    assert.equal(provider?.enabled, true);
    const runnable = /^runnable: (\S+)$/m.exec(all)?.[1];
    assert.ok(runnable && runnable !== 'null', `no runnable${context}`);
    assert.match(all, /^resource: [0-9a-f-]{36}$/m, `no resource${context}`);
    const run = /^run: ([0-9a-f-]{36})$/m.exec(all)?.[1];
    assert.ok(run, `no run${context}`);
    const finished = JSON.parse(/^\{"status".*$/m.exec(all)?.[0] ?? 'null') as { status: string; outputs: string[] } | null;
    assert.deepEqual(finished, { status: 'succeeded', outputs: ['Hello from openai'], error: null }, context);
    const secret = /^\{"secret":"(whsec_[^"]+)"\}$/m.exec(all)?.[1];
    assert.ok(secret, `no webhook secret${context}`);
    assert.match(all, /^workspace: [0-9a-f-]{36}$/m, `no workspace${context}`);
    assert.match(all, /^\{"models":\{"default":\{"provider":"openai","model":"gpt-4o-mini"\}\}\}$/m, `no workspace config${context}`);
    assert.match(all, /^\{"metadata":\{"file_count":2,"total_bytes":\d+,/m, `no workspace metadata (the template's README and the config)${context}`);
    // The thread's reply, assembled from the stream's text deltas, and the command's streamed output.
    assert.equal(all.match(/^Hello from openai$/gm)?.length, 2, `no thread reply and command output${context}`);
    assert.match(all, /^\{"command":"greet"\}$/m, `no command${context}`);
    assert.match(all, /^\{"lifecycle":"archived"\}$/m, `no lifecycle event${context}`);

    // The fake got the README's prompt with the file the README created.
    const [request] = vendor.requests;
    assert.ok(request, 'the fake vendor got no request');
    assert.match(JSON.stringify(request.body), /Summarize: Runloom stores and runs AI workflows/);

    // The callback reaches the sink, carries the README's callback_headers and verifies with the printed secret.
    const [callback] = await sink.waitFor(1, 20_000);
    assert.equal(callback!.headers['x-team'], 'docs');
    const verified = new Webhook(secret).verify(callback!.body, callback!.headers) as { type: string; data: { id: string; status: string } };
    assert.equal(verified.type, 'run.completed');
    assert.equal(verified.data.id, run);
    assert.equal(verified.data.status, 'succeeded');
  });
});
