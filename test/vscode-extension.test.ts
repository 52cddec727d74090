import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeVendor } from '../packages/core/src/testing/index';
import { startTestServer } from './support/server';
import { ensureCodeServerTools, runInCodeServer } from '../packages/vscode/test-support/code-server-runner';
import {
  COMMAND_REPLY_CHUNKS,
  FIRST_REPLY_CHUNKS,
  PARTIAL_REPLY_CHUNKS,
  REMOTE_REPLY_CHUNKS,
  REMOTE_THREAD,
  REMOTE_WORKSPACE,
} from '../packages/vscode/integration/vendor-script';

const extensionPath = path.resolve(__dirname, '../packages/vscode');
const testsPath = path.join(extensionPath, 'dist-integration/index.js');

/**
 * The extension's integration suite (packages/vscode/integration) inside a real VS Code: code-server
 * with its real extension host, driven by headless chromium. `npm test` builds the bundles first.
 */
describe('VS Code extension, inside a real VS Code (code-server)', function () {
  // The first run on a machine installs code-server (a few minutes); later runs reuse it.
  this.timeout(20 * 60_000);

  it('passes its integration suite: language features, threads streaming into the chat panel and stop, a command run, a shell command only once allowed, a process run approved in the tree, the folder watcher, remote mode', async () => {
    assert.ok(fs.existsSync(testsPath), `${testsPath} is missing: run npm run build first`);
    const tools = ensureCodeServerTools();
    const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-vscode-fixture-'));
    fs.cpSync(path.join(extensionPath, 'integration/fixture'), workspace, { recursive: true });
    const vendor = await startFakeVendor('openai');
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    vendor.reply(
      { type: 'text', chunks: FIRST_REPLY_CHUNKS },
      // Half of it, then nothing until the run ends: the suite stops this reply.
      { type: 'text', chunks: PARTIAL_REPLY_CHUNKS, gate },
      { type: 'text', chunks: COMMAND_REPLY_CHUNKS },
      { type: 'text', chunks: REMOTE_REPLY_CHUNKS },
    );
    // The remote `runloom serve` the suite switches to last: one workspace with one thread.
    const remote = await startTestServer({ allowPrivateNetwork: true });
    const account = 'acct-editor';
    const client = await remote.runloom.auth.createClient(account);
    await remote.runloom.providers.put(account, 'openai', { enabled: true, credentials: vendor.credentials });
    const remoteWorkspace = await remote.runloom.workspaces.create(account, { name: REMOTE_WORKSPACE }, 'test');
    await remote.runloom.threads.save(account, remoteWorkspace.id, 'remote-thread', { title: REMOTE_THREAD, messages: [] });
    try {
      const run = await runInCodeServer(tools, {
        extensionPath,
        testsPath,
        workspace,
        timeoutMs: 5 * 60_000,
        env: {
          RUNLOOM_TEST_OPENAI_URL: vendor.baseUrl,
          RUNLOOM_TEST_OPENAI_KEY: vendor.credentials.api_key!,
          RUNLOOM_TEST_REMOTE_URL: remote.url,
          RUNLOOM_TEST_REMOTE_CLIENT_ID: client.client_id,
          RUNLOOM_TEST_REMOTE_CLIENT_SECRET: client.client_secret,
        },
        screenshotOnFailure: path.join(os.tmpdir(), 'runloom-vscode-failure.png'),
        // RUNLOOM_VSCODE_SCREENSHOTS=dir keeps a picture of each panel as the suite shows it.
        screenshotDir: process.env.RUNLOOM_VSCODE_SCREENSHOTS,
        // RUNLOOM_VSCODE_LOG=1 prints what the workbench and the suite log, as it comes.
        onLog: process.env.RUNLOOM_VSCODE_LOG ? (line) => console.log(`      [vscode] ${line}`) : undefined,
      });
      assert.equal(run.code, 0, `the integration suite failed:\n${run.output}`);
      assert.match(run.output, /passing/);
    } finally {
      release();
      await remote.close();
      await vendor.close();
      fs.rmSync(workspace, { recursive: true, force: true });
    }
  });
});
