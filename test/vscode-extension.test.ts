import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureCodeServerTools, runInCodeServer } from '../packages/vscode/test-support/code-server-runner';

const extensionPath = path.resolve(__dirname, '../packages/vscode');
const testsPath = path.join(extensionPath, 'dist-integration/index.js');

/**
 * The extension's integration suite (packages/vscode/integration) inside a real VS Code: code-server
 * with its real extension host, driven by headless chromium. `npm test` builds the bundles first.
 */
describe('VS Code extension, inside a real VS Code (code-server)', function () {
  // The first run on a machine installs code-server (a few minutes); later runs reuse it.
  this.timeout(20 * 60_000);

  it('passes its integration suite: diagnostics, completion and hover of Runloom files', async () => {
    assert.ok(fs.existsSync(testsPath), `${testsPath} is missing: run npm run build first`);
    const tools = ensureCodeServerTools();
    const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-vscode-fixture-'));
    fs.cpSync(path.join(extensionPath, 'integration/fixture'), workspace, { recursive: true });
    try {
      const run = await runInCodeServer(tools, {
        extensionPath,
        testsPath,
        workspace,
        timeoutMs: 5 * 60_000,
        screenshotOnFailure: path.join(os.tmpdir(), 'runloom-vscode-failure.png'),
      });
      assert.equal(run.code, 0, `the integration suite failed:\n${run.output}`);
      assert.match(run.output, /passing/);
    } finally {
      fs.rmSync(workspace, { recursive: true, force: true });
    }
  });
});
