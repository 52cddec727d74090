import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { type LaunchedProcess, type LaunchRequest, ProcessLaunchError, type ProcessExit, type ProcessLauncher } from '../../ports/process-launcher';

/**
 * `ProcessLauncher` on `child_process.spawn` without a shell (`shell: false`: argv goes to
 * `execve` as it is). `detached: true` makes the child the leader of a new process group, so
 * `kill()` signals the group (`process.kill(-pid)`) and reaches what the program started. When the
 * program exits, what it left running in its group is killed too: a background grandchild would
 * otherwise hold the output open and the program would never be seen to end.
 */
export class NodeProcessLauncher implements ProcessLauncher {
  async launch(request: LaunchRequest): Promise<LaunchedProcess> {
    const [program, ...args] = request.argv;
    if (program === undefined || program === '') throw new ProcessLaunchError(String(program), 'no program given');
    const child = spawn(program, args, {
      cwd: request.cwd,
      env: { ...process.env, ...request.env },
      shell: false,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (error: NodeJS.ErrnoException) => reject(new ProcessLaunchError(program, error.code ?? error.message)));
    });
    const pid = child.pid!;
    const killGroup = (): void => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // ESRCH: the group is gone already.
      }
    };
    const output = mergeOutput(child.stdout, child.stderr);
    const exited = new Promise<ProcessExit>((resolve) => {
      child.once('exit', killGroup);
      child.once('close', (exitCode: number | null, signal: NodeJS.Signals | null) => resolve({ exitCode, signal }));
    });
    return { pid, output, exited, kill: killGroup };
  }
}

/** Chunks held before the streams are paused until the reader catches up. */
const MAX_PENDING_CHUNKS = 64;

/** Both streams as one, chunks in arrival order; ends when both have ended. */
function mergeOutput(...streams: Readable[]): AsyncIterable<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let open = streams.length;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    wake?.();
    wake = undefined;
  };
  for (const stream of streams) {
    stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (chunks.length >= MAX_PENDING_CHUNKS) for (const each of streams) each.pause();
      notify();
    });
    stream.once('close', () => {
      open -= 1;
      notify();
    });
  }
  return {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const next = chunks.shift();
        if (chunks.length === 0) for (const each of streams) each.resume();
        if (next) yield next;
        else if (open === 0) return;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}
