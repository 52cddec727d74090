import fs from 'node:fs';
import { lstat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { NodeWorkspaceFileSystems } from '../packages/core/src/adapters/node/node-workspace-file-system';
import { type BenchResult, benchResult } from './bench-result';
import { median } from './child-server';

/**
 * Glob search over a workspace of FILES files (DIRS folders, half `.ts`, half `.md`), created once
 * in a temp dir: the port's `glob('**\/*.ts', { maxDepth: 10 })` through `NodeWorkspaceFileSystems`
 * against tinyglobby called directly on the same folder with the same options, in the same
 * process, taking turns; each figure is the median of ROUNDS searches, in matches per second.
 * (a) paths only (`stats: false`, what a search asks by default); (b) with sizes and times, against
 * tinyglobby followed by one lstat per match.
 */

const FILES = Number(process.env.BENCH_GLOB_FILES ?? 100_000);
const DIRS = 100;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const PATTERN = '**/*.ts';
const MAX_DEPTH = 10;

export async function runWorkspaceGlobBench(): Promise<BenchResult[]> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-glob-'));
  try {
    const files = await new NodeWorkspaceFileSystems(base).open('bench');
    const root = files.localRoot as string;
    plant(root);
    const direct = (): Promise<string[]> => glob(PATTERN, { cwd: root, deep: MAX_DEPTH - 1, followSymbolicLinks: false, expandDirectories: false });
    const timed = async (search: () => Promise<unknown[]>): Promise<{ seconds: number; count: number }> => {
      const started = process.hrtime.bigint();
      const found = await search();
      return { seconds: Number(process.hrtime.bigint() - started) / 1e9, count: found.length };
    };
    const compare = async (name: string, port: () => Promise<unknown[]>, baseline: () => Promise<unknown[]>): Promise<BenchResult> => {
      const portRates: number[] = [];
      const baselineRates: number[] = [];
      // One warm-up each, so both read a tree already in the page cache.
      await port();
      await baseline();
      for (let round = 0; round < ROUNDS; round += 1) {
        // Taking turns at going first, so neither always runs after the other's garbage.
        const first = round % 2 === 0 ? await timed(port) : await timed(baseline);
        const second = round % 2 === 0 ? await timed(baseline) : await timed(port);
        const [a, b] = round % 2 === 0 ? [first, second] : [second, first];
        if (a.count !== b.count || a.count !== FILES / 2) throw new Error(`${name}: the port found ${a.count} matches, tinyglobby ${b.count}, expected ${FILES / 2}`);
        portRates.push(a.count / a.seconds);
        baselineRates.push(b.count / b.seconds);
      }
      return benchResult({ name, value: median(portRates), baseline: median(baselineRates), unit: 'matches/s', goal: { of: 'ratio', atLeast: 0.8 } });
    };
    return [
      await compare(`workspace glob ${PATTERN} over ${FILES.toLocaleString('en-US')} files, paths`, () => files.glob(PATTERN, { maxDepth: MAX_DEPTH, stats: false }), direct),
      await compare(
        `workspace glob ${PATTERN} over ${FILES.toLocaleString('en-US')} files, with stats`,
        () => files.glob(PATTERN, { maxDepth: MAX_DEPTH }),
        async () => Promise.all((await direct()).map((match) => lstat(path.join(root, match)))),
      ),
    ];
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

/** DIRS folders of FILES / DIRS empty files each, every other one a `.ts`. */
function plant(root: string): void {
  const perDir = Math.ceil(FILES / DIRS);
  for (let dir = 0; dir < DIRS; dir += 1) {
    const folder = path.join(root, `pkg-${dir}`, 'src');
    fs.mkdirSync(folder, { recursive: true });
    for (let file = 0; file < perDir; file += 1) fs.writeFileSync(path.join(folder, `file-${file}.${file % 2 === 0 ? 'ts' : 'md'}`), '');
  }
}

export { runWorkspaceGlobBench as run };
