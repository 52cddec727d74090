import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';

/** A server in a child process: `runloom serve`, or a bare baseline server. */
export interface ChildServer {
  url: string;
  pid: number;
  /** CPU time (user + system) the process has used so far, in ms (Linux; 0 elsewhere). */
  cpuMs(): number;
  /**
   * The same for its main thread alone (Linux; 0 elsewhere): what bounds a Node server's rate. The
   * rest is V8's compiler and GC threads, libuv's pool (fsync) and worker threads.
   */
  mainThreadCpuMs(): number;
  /**
   * Times its main thread has been switched out so far, for waiting (voluntary: its event loop ran
   * out of work) or taken off a core for another thread (involuntary) (Linux; 0 elsewhere). Each
   * costs the next burst of work a cold start (caches, and in a VM the vCPU's wake-up).
   */
  mainThreadSwitches(): { voluntary: number; involuntary: number };
  /** SIGTERM, then SIGKILL after 10 s; safe to call more than once. */
  stop(): Promise<void>;
  /** SIGKILL (a crash: nothing is flushed or handed back) and waits for the exit. */
  kill(): Promise<void>;
}

/** A service-account client the bench bootstraps into `runloom serve`. */
export interface BenchClient {
  account: string;
  id: string;
  secret: string;
}

/** The built CLI (`npm run build`). */
export const RUNLOOM_CLI = path.resolve(__dirname, '..', 'packages/server-adapter/dist/cli.js');

/** `node` arguments running `runloom serve` on a free port with `dataDir` and `flags`. */
export function serveArgs(dataDir: string, flags: string[]): string[] {
  return [RUNLOOM_CLI, 'serve', '--port', '0', '--data-dir', dataDir, ...flags];
}

/**
 * The flags of one instance of several sharing a deployment (ARCHITECTURE.md, "Beyond one
 * machine"): the database, the blob store (by default a folder under `root`), the workspaces
 * volume under `root`, and the key.
 */
export function sharedInstanceFlags(
  databaseUrl: string,
  root: string,
  secretKey: string,
  blobStoreFlags: string[] = ['--blob-store', path.join(root, 'blobs')],
): string[] {
  return ['--database-url', databaseUrl, ...blobStoreFlags, '--workspaces-dir', path.join(root, 'workspaces'), '--secret-key', secretKey];
}

/** The folder the environment variable `variable` names (or its `subfolder`); undefined when it is not set. */
export function folderFromEnv(variable: string, subfolder?: string): string | undefined {
  const dir = process.env[variable];
  if (!dir) return undefined;
  return subfolder === undefined ? dir : path.join(dir, subfolder);
}

/** Where servers' CPU profiles go: `BENCH_PROFILE_DIR` (or its `subfolder`); undefined when it is not set. */
export function profileFolder(subfolder?: string): string | undefined {
  return folderFromEnv('BENCH_PROFILE_DIR', subfolder);
}

/** `node` flags writing a V8 CPU profile of the server into `profileFolder(subfolder)` when there is one; none otherwise. */
export function cpuProfileFlags(subfolder?: string): string[] {
  const folder = profileFolder(subfolder);
  return folder === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${folder}`];
}

/** The `--bootstrap-client` flag creating `client`. */
export function bootstrapFlag(client: BenchClient): string[] {
  return ['--bootstrap-client', `${client.account}:${client.id}:${client.secret}`];
}

/**
 * Spawns `node ARGS` (under `command` when there is one: `valgrind` and its options) with its
 * stdout in a file (the request log must not cost this process) and waits until it prints
 * `listening on URL`.
 */
export async function startChildServer(args: string[], logDir: string, env: Record<string, string> = {}, command: string[] = []): Promise<ChildServer> {
  const logFile = path.join(logDir, `server-${Date.now()}-${Math.random().toString(36).slice(2)}.log`);
  const log = fs.openSync(logFile, 'w');
  const [file, ...commandArgs] = [...command, process.execPath, ...args];
  const child: ChildProcess = spawn(file!, commandArgs, { env: { ...process.env, ...env }, stdio: ['ignore', log, 'inherit'] });
  fs.closeSync(log);
  const exited = once(child, 'exit');
  // Under valgrind a server starts some ten times slower.
  const deadline = Date.now() + (command.length > 0 ? 300_000 : 30_000);
  for (;;) {
    const url = /listening on (http:\/\/\S+)/.exec(fs.readFileSync(logFile, 'utf8'))?.[1];
    if (url) {
      let stopped: Promise<void> | undefined;
      return {
        url,
        pid: child.pid!,
        cpuMs: () => processCpuMs(child.pid!),
        mainThreadCpuMs: () => statCpuMs(`/proc/${child.pid!}/task/${child.pid!}/stat`),
        mainThreadSwitches: () => contextSwitches(`/proc/${child.pid!}/task/${child.pid!}/status`),
        stop: () =>
          (stopped ??= (async () => {
            child.kill('SIGTERM');
            const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
            await exited;
            clearTimeout(killer);
          })()),
        kill: async () => {
          child.kill('SIGKILL');
          await exited;
        },
      };
    }
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`node ${args.slice(0, 2).join(' ')} did not start:\n${fs.readFileSync(logFile, 'utf8')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Linux reports process CPU time in clock ticks of 10 ms. */
const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of a process from /proc/PID/stat, in ms; 0 where /proc is missing. */
export function processCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** utime + stime from a /proc stat file (a process's, or a thread's under task/), in ms; 0 where it is missing. */
function statCpuMs(statFile: string): number {
  try {
    const stat = fs.readFileSync(statFile, 'utf8');
    // Fields after the command name (which may hold spaces) start at its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** The context switch counts of a /proc status file (a process's, or a thread's under task/); 0 where it is missing. */
function contextSwitches(statusFile: string): { voluntary: number; involuntary: number } {
  try {
    const status = fs.readFileSync(statusFile, 'utf8');
    const count = (name: string) => Number(new RegExp(`^${name}:\\s*(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { voluntary: count('voluntary_ctxt_switches'), involuntary: count('nonvoluntary_ctxt_switches') };
  } catch {
    return { voluntary: 0, involuntary: 0 };
  }
}

/** An access token for `client` from the server at `baseUrl`. */
export async function fetchToken(baseUrl: string, client: BenchClient): Promise<string> {
  const response = await fetch(`${baseUrl}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret }),
  });
  if (response.status !== 200) throw new Error(`POST /auth/token answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** A new workspace of the token's account on the server; answers its id. */
export async function createWorkspace(baseUrl: string, authorization: string, name = 'bench'): Promise<string> {
  const response = await fetch(`${baseUrl}/workspaces`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
  if (response.status !== 201) throw new Error(`POST /workspaces answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { data: { id: string } }).data.id;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** The value `fraction` of the way up `values` sorted (0.99: the p99), the largest past the end. */
export function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
}

/** A prompt runnable's configuration that the benches create and list (one input, one model). */
export const BENCH_RUNNABLE_CONFIG = [
  'type: prompt',
  'prompt:',
  '  system: You summarise the input in one sentence.',
  '  messages:',
  '    - role: user',
  '      content: "{{text}}"',
  'inputs:',
  '  - name: text',
  '    mime_types: [text/plain]',
  'llms:',
  '  - model: gpt-4o-mini',
  '',
].join('\n');
