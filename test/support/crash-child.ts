import { spawn } from 'node:child_process';

/** A child process a crash test kills with SIGKILL once it has said it is ready. */
export interface CrashChild {
  /** Its first line of output (what it set up: ids, a process group…). */
  line: string;
  /** Sends SIGKILL and waits for the exit. */
  kill(): Promise<void>;
}

/**
 * Runs `script` (TypeScript, through tsx) with `args`, on PostgreSQL when `databaseUrl` is given
 * (as `RUNLOOM_DATABASE_URL`), and resolves with its first line of output; rejects, with its
 * stderr, if it exits before writing one.
 */
export async function startCrashChild(script: string, args: string[], databaseUrl: string | undefined): Promise<CrashChild> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RUNLOOM_DATABASE_URL: databaseUrl ?? '' },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('\n')) resolve(stdout.split('\n')[0]!);
    });
    child.on('exit', (code) => reject(new Error(`the child exited with ${code}: ${stderr}`)));
  });
  return {
    line,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
