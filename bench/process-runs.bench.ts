import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createRunloom, JobQueue, type Runloom } from '../packages/core/src/index';
import { WorkspaceEvents } from '../packages/core/src/domain/workspace-events/workspace-events';
import { createTestSchema, TEST_DATABASE_URL } from '../packages/core/test-support/postgres-test-store';
import { type BenchResult, benchResult } from './bench-result';
import { median } from './child-server';

/**
 * Process runs (ARCHITECTURE.md, "Process runs"), in process on the embedded store:
 * (a) runs of 3 phases × 10 instant tasks (`wait` 0 s: no work, so all of a run's time is
 *     scheduling: a transition, a durable write and a job per task start and end). Completed runs/s
 *     with RUNS runs at once; and the scheduling overhead per task, the median over SEQUENTIAL runs
 *     one at a time of (wall time ÷ 30), beside the same 30 tasks as bare keyed jobs on the same
 *     `JobQueue` (enqueued, run, ended: two durable writes each; three batches of ten at once, like
 *     the phases): the least a durable task can cost on this store.
 * (b) PARKED runs waiting on an approval, then PARKED on a 1-hour `wait`: the JS heap kept per
 *     parked run after a GC (run with `--expose-gc`), the growth of RSS (which also counts memory
 *     touched while creating them and not yet returned) and the process's CPU while idle for IDLE_MS,
 *     beside the same instance idle with no run; on the embedded store (whose data is in this
 *     process's memory) and on PostgreSQL (RUNLOOM_TEST_DATABASE_URL; the engine's memory alone).
 * `BENCH_PROCESS_RUNS` (default 50), `BENCH_PROCESS_SEQUENTIAL` (default 30), `BENCH_PARKED_RUNS`
 * (default 10000) and `BENCH_IDLE_MS` (default 5000) set the sizes.
 */
const RUNS = Number(process.env.BENCH_PROCESS_RUNS ?? 50);
const SEQUENTIAL = Number(process.env.BENCH_PROCESS_SEQUENTIAL ?? 30);
const PARKED = Number(process.env.BENCH_PARKED_RUNS ?? 10_000);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 5000);
const ACCOUNT = 'acct-bench-processes';
const TASKS_PER_PHASE = 10;
const PHASES = 3;

const instantSpec = {
  name: 'instant',
  phases: Array.from({ length: PHASES }, (_, p) => ({
    id: `p${p}`,
    name: `phase ${p}`,
    tasks: Array.from({ length: TASKS_PER_PHASE }, (_, t) => ({ id: `t${t}`, name: `task ${t}`, type: 'wait', input: { seconds: 0 } })),
  })),
};
const parkedSpec = (task: object) => ({ name: 'parked', phases: [{ id: 'p', name: 'p', tasks: [{ id: 't', name: 't', ...task }] }] });

/** Runs created and started, resolved once each reaches `status` (watched on the workspace's events). */
async function runTo(runloom: Runloom, workspaceId: string, count: number, spec: object, status: string): Promise<void> {
  const waiting = new Set<string>();
  let created = false;
  let resolveAll = (): void => {};
  const all = new Promise<void>((resolve) => (resolveAll = resolve));
  const reached = new Set<string>();
  const subscription = runloom.container.get<WorkspaceEvents>(WorkspaceEvents).subscribe(workspaceId, ({ event }) => {
    if (event.type !== 'process.run.updated' || event.status !== status) return;
    reached.add(event.run_id as string);
    waiting.delete(event.run_id as string);
    if (created && waiting.size === 0) resolveAll();
  });
  await Promise.all(
    Array.from({ length: count }, async () => {
      const run = await runloom.processes.create(ACCOUNT, workspaceId, 'bench', { spec } as never);
      if (!reached.has(run.id)) waiting.add(run.id);
      await runloom.processes.act(ACCOUNT, workspaceId, run.id, 'start');
    }),
  );
  created = true;
  if (waiting.size === 0) resolveAll();
  await all;
  subscription.unsubscribe();
}

/** The bare baseline: 30 keyed jobs in three batches of ten, each ending with one write. */
async function bareTasks(runloom: Runloom, round: number): Promise<number> {
  const queue = runloom.container.get<JobQueue>(JobQueue);
  const started = performance.now();
  for (let phase = 0; phase < PHASES; phase++) {
    await Promise.all(
      Array.from({ length: TASKS_PER_PHASE }, (_, task) => {
        const key = `${round}:${phase}:${task}`;
        return new Promise<void>((resolve) => {
          pendingBare.set(key, resolve);
          void queue.enqueue(BARE_JOB, { key }, { key });
        });
      }),
    );
  }
  return (performance.now() - started) / (PHASES * TASKS_PER_PHASE);
}
const BARE_JOB = 'bench.bare-task';
const pendingBare = new Map<string, () => void>();

/** RSS, and the JS heap still in use after a GC (what the process keeps, not what it has touched), in KB. */
function memoryKb(): { rss: number; heap: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const usage = process.memoryUsage();
  return { rss: usage.rss / 1024, heap: (usage.heapUsed + usage.external) / 1024 };
}

/** CPU time (user + system) of this process over `ms` of wall time, in % of one core. */
async function idleCpuPercent(ms: number): Promise<number> {
  const before = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const used = process.cpuUsage(before);
  return ((used.user + used.system) / 1000 / ms) * 100;
}

export async function run(): Promise<BenchResult[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-processes-'));
  try {
    const results = await instantRuns(dataDir);
    results.push(...(await parkedRuns('the embedded store', dataDir)));
    const schema = createTestSchema();
    try {
      results.push(...(await parkedRuns('PostgreSQL', dataDir, `${TEST_DATABASE_URL}?schema=${schema.schema}`)));
    } finally {
      await schema.drop();
    }
    return results;
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** (a) on the embedded store. */
async function instantRuns(dataDir: string): Promise<BenchResult[]> {
  const runloom = await createRunloom({ dataDir: fs.mkdtempSync(path.join(dataDir, 'instant-')) });
  try {
    runloom.container.get<JobQueue>(JobQueue).register<{ key: string }>(
      BARE_JOB,
      async ({ key }, job) => {
        await job.complete([]);
        pendingBare.get(key)?.();
      },
      { concurrency: 256 },
    );
    const workspace = await runloom.workspaces.create(ACCOUNT, { name: 'bench' }, 'bench');
    const results: BenchResult[] = [];

    // (a) throughput, then per-task overhead beside bare jobs, the two taking turns.
    const throughputStart = performance.now();
    await runTo(runloom, workspace.id, RUNS, instantSpec, 'succeeded');
    const runsPerSecond = RUNS / ((performance.now() - throughputStart) / 1000);
    const perTask: number[] = [];
    const barePerTask: number[] = [];
    for (let round = 0; round < SEQUENTIAL; round++) {
      const started = performance.now();
      await runTo(runloom, workspace.id, 1, instantSpec, 'succeeded');
      perTask.push((performance.now() - started) / (PHASES * TASKS_PER_PHASE));
      barePerTask.push(await bareTasks(runloom, round));
    }
    results.push(
      benchResult({ name: `process runs: ${PHASES}×${TASKS_PER_PHASE} instant tasks, ${RUNS} runs at once`, value: runsPerSecond, baseline: null, goal: null, unit: 'runs/s' }),
      benchResult({
        name: 'process runs: scheduling overhead per task (median), vs a bare keyed job',
        value: median(perTask),
        baseline: median(barePerTask),
        goal: { of: 'value', atMost: 2 },
        unit: 'ms',
      }),
    );

    return results;
  } finally {
    await runloom.close();
  }
}

/**
 * (b) on one store: the instance idle with no run parked (the baseline), then PARKED runs on an
 * approval, then PARKED more on a 1-hour wait, each time RSS growth per run and idle CPU (measured
 * after as long again, so the store's own work after the burst, snapshots or vacuum, has settled).
 */
async function parkedRuns(store: string, dataDir: string, databaseUrl?: string): Promise<BenchResult[]> {
  const runloom = await createRunloom({ dataDir: fs.mkdtempSync(path.join(dataDir, 'parked-')), databaseUrl });
  try {
    const workspace = await runloom.workspaces.create(ACCOUNT, { name: 'parked' }, 'bench');
    const settledCpu = async (): Promise<number> => {
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      return idleCpuPercent(IDLE_MS);
    };
    const idleCpu = await settledCpu();
    const results: BenchResult[] = [];
    for (const [what, task, status] of [
      ['an approval', { type: 'approval', input: { message: 'ok?' } }, 'waiting_approval'],
      ['a 1-hour wait', { type: 'wait', input: { seconds: 3600 } }, 'running'],
    ] as const) {
      const before = memoryKb();
      await runTo(runloom, workspace.id, PARKED, parkedSpec(task), status);
      const cpu = await settledCpu();
      const after = memoryKb();
      const name = `${PARKED} process runs parked on ${what}, ${store}`;
      const withStore = databaseUrl ? '' : ' (the in-memory store included)';
      results.push(
        benchResult({ name: `${name}: heap kept per run${withStore}`, value: (after.heap - before.heap) / PARKED, baseline: null, goal: { of: 'value', atMost: 2 }, unit: 'KB' }),
        benchResult({ name: `${name}: RSS growth per run${withStore}`, value: (after.rss - before.rss) / PARKED, baseline: null, goal: null, unit: 'KB' }),
        benchResult({ name: `${name}: CPU while idle, vs no runs`, value: cpu, baseline: idleCpu, goal: null, unit: '%' }),
      );
    }
    return results;
  } finally {
    await runloom.close();
  }
}
