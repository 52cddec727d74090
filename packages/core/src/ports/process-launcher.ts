/**
 * Starts programs on this machine: what `shell` commands run through (docs/api.md#commands). The
 * domain cannot reach `node:child_process`; this port is its only way to a process.
 *
 * Guarantees an adapter gives:
 * - `argv[0]` is the program and every other element reaches it as one argument, byte for byte:
 *   nothing goes through a shell, so quotes, `;`, `$(…)`, `|`, globs and spaces mean nothing.
 * - The program runs in a process group of its own: `kill()` ends it and everything it started
 *   (children, grandchildren) that stayed in the group.
 * - `output` yields stdout and stderr interleaved as they arrive, and ends once both are closed;
 *   `exited` resolves once the program has exited and its output has ended, never rejects.
 * - A program that cannot start (missing, not executable, `cwd` missing) rejects `launch` with
 *   `ProcessLaunchError`; nothing is left running.
 */
export const ProcessLauncher = Symbol.for('runloom.ProcessLauncher');

export interface LaunchRequest {
  /** The program and its arguments; at least the program. */
  argv: readonly string[];
  /** The working directory (an absolute folder on this machine). */
  cwd: string;
  /** Variables added to (or overriding) the server's own environment. */
  env?: Readonly<Record<string, string>>;
}

export interface ProcessExit {
  /** The exit code, or null when a signal ended the program. */
  exitCode: number | null;
  /** The signal that ended it (`SIGKILL`, …), or null. */
  signal: string | null;
}

export interface LaunchedProcess {
  readonly pid: number;
  readonly output: AsyncIterable<Uint8Array>;
  readonly exited: Promise<ProcessExit>;
  /** Kills the whole process group (SIGKILL); harmless once it has exited. */
  kill(): void;
}

export interface ProcessLauncher {
  launch(request: LaunchRequest): Promise<LaunchedProcess>;
}

/** The program could not be started; the message names it and why, never its environment. */
export class ProcessLaunchError extends Error {
  constructor(
    readonly program: string,
    readonly reason: string,
  ) {
    super(`cannot start '${program}': ${reason}`);
    this.name = 'ProcessLaunchError';
  }
}
