import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { folderFromEnv } from './child-server';

/**
 * Instructions a server executes, counted by valgrind's callgrind: the same on a busy machine as on
 * an idle one, so it tells more work per run from the same work run slower (cold caches after a
 * wake-up, preemptions), which CPU time cannot. With `BENCH_CALLGRIND_DIR` set, a bench runs its
 * servers under `valgrind --tool=callgrind` (about 5x slower while nothing is counted, 50-100x while
 * counting, so with far fewer runs), a file per thread and per dump in that folder; counting starts
 * off, so a bench counts its measure alone, warm-up and start left out.
 */
export interface InstructionCount {
  /** Every thread of the process: V8's compiler and GC threads and libuv's pool beside the main one. */
  all: number;
  mainThread: number;
}

/** The folder of the counts (or its `subfolder`); undefined when `BENCH_CALLGRIND_DIR` is not set. */
function callgrindFolder(subfolder: string): string | undefined {
  return folderFromEnv('BENCH_CALLGRIND_DIR', subfolder);
}

/** The command a server runs under (`node` and its arguments follow): valgrind's when counting into `subfolder`, none otherwise. */
export function instructionCountingCommand(subfolder: string): string[] {
  const folder = callgrindFolder(subfolder);
  if (folder === undefined) return [];
  fs.mkdirSync(folder, { recursive: true });
  return ['valgrind', '--quiet', '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--callgrind-out-file=${path.join(folder, 'callgrind.out.%p')}`];
}

/** Starts counting the instructions of the server `pid`, run under `instructionCountingCommand`. */
export function startCountingInstructions(pid: number): void {
  execFileSync('callgrind_control', ['--instr=on', String(pid)], { stdio: 'ignore' });
}

/** Stops counting and reads what was counted since `startCountingInstructions` (its only dump). */
export function stopCountingInstructions(pid: number, subfolder: string): InstructionCount {
  execFileSync('callgrind_control', ['--dump', String(pid)], { stdio: 'ignore' });
  execFileSync('callgrind_control', ['--instr=off', String(pid)], { stdio: 'ignore' });
  const folder = callgrindFolder(subfolder)!;
  // One file per thread of the first dump: callgrind.out.<pid>.1-<thread>, the main thread's 01.
  const prefix = `callgrind.out.${pid}.1-`;
  const count: InstructionCount = { all: 0, mainThread: 0 };
  for (const file of fs.readdirSync(folder).filter((name) => name.startsWith(prefix))) {
    const instructions = Number(/^summary: (\d+)/m.exec(fs.readFileSync(path.join(folder, file), 'utf8'))?.[1] ?? 0);
    count.all += instructions;
    if (file === `${prefix}01`) count.mainThread = instructions;
  }
  return count;
}
