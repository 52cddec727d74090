import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type BenchResult, benchResult } from './bench-result';
import { bootstrapFlag, type ChildServer, cpuProfileFlags, median, profileFolder, RUNLOOM_CLI, serveArgs, sharedInstanceFlags, startChildServer } from './child-server';
import { FAKE_MODEL, FAKE_PROMPT, startFakeVendor, FAKE_API_KEY } from './fake-vendor';
import { type InstructionCount, instructionCountingCommand, startCountingInstructions, stopCountingInstructions } from './instruction-count';
import { CLIENT, connect } from './runs.bench';
import { BENCH_DATABASE_URL, connectAdmin, createScratchDatabase } from './scratch-database';

/**
 * Runs on one instance and on two sharing one PostgreSQL database (a fresh database each, one blob
 * store, one workspaces dir, one secret key): the built `runloom serve` processes, async runs
 * submitted by 16 clients alternately to each instance, against a fake vendor (its own process)
 * that answers at once. Per configuration: completed runs/s and the servers' CPU per completed run
 * (both instances' together), with the database transactions per run beside it (pg_stat_database).
 * Two instances share this machine's 2 cores with the database and the bench, so throughput says
 * little: the goal is on CPU per run (two ≤ 1.2× one). A third configuration, two instances with
 * every run sent to the first, sets the cost of coordinating (the second's polls, liveness looks,
 * event notices) apart from what each process loses by batching half the load (fewer writes per
 * group commit and per socket write). A fourth, one instance sent runs by 8 clients (the load each
 * of two instances gets), sets that batching loss apart from what two busy servers cost each other
 * on 2 cores. ROUNDS rounds, the configurations alternating; medians. Beside each figure, the times
 * the servers' main threads were switched out per run (waiting for work, or preempted): on this
 * kind of machine a process's CPU per run follows them (each switch makes the next burst of work
 * start cold), and a server sent half the runs, or sharing the cores with another busy one, is
 * switched out more often per run.
 *
 * Every instance that is sent runs is warmed up first with WARMUP_RUNS_PER_INSTANCE of its own, so
 * the figures are those of warm processes. A fresh process spends about 2.5 s of CPU over its first
 * 2,000-3,000 runs on V8's tiering (the optimising compiler's threads, code running unoptimised
 * meanwhile): with a warm-up of 200 runs in all, a measure of 3,000 counted that once for one
 * instance and twice for two (each warming up on half the runs), which alone made two instances
 * look ~1.5x as costly per run, and says nothing of coordination; a deployment pays it once per
 * process start.
 * Durable creates/s on PostgreSQL beside the embedded store are bench/writes.bench.ts's figures.
 * `BENCH_MULTI_RUNS` (default 3000) per round, `BENCH_MULTI_ROUNDS` (default 3); `BENCH_PROFILE_DIR`
 * profiles the servers (`node --cpu-prof`, a folder per configuration, with the measured spans in
 * its `measure-windows.txt`: a profile cut to one leaves the start and the warm-up out);
 * `BENCH_CALLGRIND_DIR` counts the instructions the servers execute per run, theirs together
 * (`instruction-count.ts`; with `BENCH_MULTI_RUNS=300`, about 5 minutes a round).
 */

const RUNS = Number(process.env.BENCH_MULTI_RUNS ?? 3000);
const ROUNDS = Number(process.env.BENCH_MULTI_ROUNDS ?? 3);
/** Runs each instance that is sent runs completes before the measure (see above). */
const WARMUP_RUNS_PER_INSTANCE = 3000;
/** Clients submitting at once, unless a configuration says otherwise. */
const CONCURRENCY = 16;

interface Figures {
  runsPerSecond: number;
  serverCpuMsPerRun: number;
  /** Transactions the database committed per run (every statement outside a transaction is one). */
  transactionsPerRun: number;
  /** Main-thread context switches per run, the servers' together: voluntary (idle) and involuntary (preempted). */
  switchesPerRun: { voluntary: number; involuntary: number };
  /** Instructions the servers executed per run, with BENCH_CALLGRIND_DIR. */
  instructionsPerRun?: InstructionCount;
}

/** How many servers share the database, how many of them the runs are submitted to (in turn), and by how many clients at once. */
interface Setup {
  instances: number;
  submittedTo: number;
  clients: number;
  label: string;
}

const SETUPS = {
  one: { instances: 1, submittedTo: 1, clients: CONCURRENCY, label: '1 instance' },
  two: { instances: 2, submittedTo: 2, clients: CONCURRENCY, label: '2 instances' },
  twoOneBusy: { instances: 2, submittedTo: 1, clients: CONCURRENCY, label: '2 instances, runs sent to one' },
  oneHalfLoad: { instances: 1, submittedTo: 1, clients: CONCURRENCY / 2, label: `1 instance, ${CONCURRENCY / 2} clients` },
} satisfies Record<string, Setup>;

async function measure({ instances, submittedTo, clients }: Setup, admin: pg.Client, vendorUrl: string, workDir: string): Promise<Figures> {
  const scratch = await createScratchDatabase(admin, BENCH_DATABASE_URL, 'runloom_multibench');
  const shared = fs.mkdtempSync(path.join(workDir, 'shared-'));
  const secretKey = randomBytes(32).toString('base64');
  const servers: ChildServer[] = [];
  const profileSubfolder = `${instances}-instances-${submittedTo}-submitted-to-${clients}-clients`;
  const countingCommand = instructionCountingCommand(profileSubfolder);
  try {
    for (let index = 0; index < instances; index += 1) {
      const dataDir = path.join(shared, `instance-${index}`);
      fs.mkdirSync(dataDir);
      servers.push(
        await startChildServer(
          [
            ...cpuProfileFlags(profileSubfolder),
            ...serveArgs(dataDir, [...sharedInstanceFlags(scratch.url, shared, secretKey), '--rate-limit', '0', '--allow-private-network', ...bootstrapFlag(CLIENT)]),
          ],
          shared,
          {},
          countingCommand,
        ),
      );
    }
    const apis = await Promise.all(servers.map((server) => connect(server.url)));
    const [first] = apis;
    await first!.call('PUT', '/v1/llm-provider/openai', { enabled: true, credentials: { api_key: FAKE_API_KEY, base_url: vendorUrl } }, [200, 201]);
    const runnable = (await first!.call('POST', '/v1/runnables', {
      name: 'bench hello',
      config_content_parsed: { type: 'prompt', prompt: FAKE_PROMPT, llms: [{ provider: 'openai', model: FAKE_MODEL }] },
    }, [201])) as { id: string };
    // Progress is read from the database, not asked of the servers: their CPU is the runs' alone.
    const database = new pg.Client({ connectionString: scratch.url });
    await database.connect();
    let ownTransactions = 0;
    const count = async (sql: string) => {
      ownTransactions += 1;
      return Number((await database.query<{ n: string }>(sql)).rows[0]!.n);
    };
    const runsCompletedPerSecond = async (runs: number): Promise<number> => {
      const started = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (next < runs) await apis[next++ % submittedTo]!.call('POST', `/v1/runnable/${runnable.id}/runs`, {}, [202]);
        }),
      );
      while ((await count(`SELECT count(*) AS n FROM "runs" WHERE "status" IN ('queued', 'running')`)) > 0) await new Promise((resolve) => setTimeout(resolve, 25));
      const seconds = (performance.now() - started) / 1000;
      const unsuccessful = await count(`SELECT count(*) AS n FROM "runs" WHERE "status" <> 'succeeded'`);
      if (unsuccessful > 0) throw new Error(`${unsuccessful} runs did not succeed`);
      return runs / seconds;
    };
    const cpu = () => servers.reduce((sum, server) => sum + server.cpuMs(), 0);
    const switches = () =>
      servers.reduce(
        (sum, server) => {
          const { voluntary, involuntary } = server.mainThreadSwitches();
          return { voluntary: sum.voluntary + voluntary, involuntary: sum.involuntary + involuntary };
        },
        { voluntary: 0, involuntary: 0 },
      );
    const transactions = () => count(`SELECT xact_commit AS n FROM pg_stat_database WHERE datname = '${scratch.name}'`);
    try {
      await runsCompletedPerSecond(WARMUP_RUNS_PER_INSTANCE * submittedTo);
      const counting = countingCommand.length > 0;
      if (counting) for (const server of servers) startCountingInstructions(server.pid);
      const cpuBefore = cpu();
      const switchesBefore = switches();
      const transactionsBefore = await transactions();
      const ownBefore = ownTransactions;
      const measureStart = process.hrtime.bigint();
      const runsPerSecond = await runsCompletedPerSecond(RUNS);
      const serverCpuMsPerRun = (cpu() - cpuBefore) / RUNS;
      const switchesAfter = switches();
      const switchesPerRun = {
        voluntary: (switchesAfter.voluntary - switchesBefore.voluntary) / RUNS,
        involuntary: (switchesAfter.involuntary - switchesBefore.involuntary) / RUNS,
      };
      noteMeasureWindow(profileSubfolder, measureStart, process.hrtime.bigint());
      const counts = counting ? servers.map((server) => stopCountingInstructions(server.pid, profileSubfolder)) : [];
      const instructionsPerRun = counting
        ? { all: counts.reduce((sum, count) => sum + count.all, 0) / RUNS, mainThread: counts.reduce((sum, count) => sum + count.mainThread, 0) / RUNS }
        : undefined;
      // The statistics reach pg_stat_database when each backend reports them (at most every 1 s, PostgreSQL 15).
      await new Promise((resolve) => setTimeout(resolve, 1500));
      // Less this bench's own reads (a transaction each).
      const ofServers = (await transactions()) - transactionsBefore - (ownTransactions - ownBefore);
      return { runsPerSecond, serverCpuMsPerRun, transactionsPerRun: ofServers / RUNS, switchesPerRun, instructionsPerRun };
    } finally {
      await database.end();
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await scratch.drop();
    fs.rmSync(shared, { recursive: true, force: true });
  }
}

/**
 * With BENCH_PROFILE_DIR, appends the measure's span to `measure-windows.txt` in the profiles' folder:
 * `<start> <end>` in µs of the monotonic clock a `.cpuprofile`'s `startTime` and sample times are
 * on, so a profile can be cut to the measured runs (start and warm-up left out).
 */
function noteMeasureWindow(subfolder: string, start: bigint, end: bigint): void {
  const folder = profileFolder(subfolder);
  if (folder === undefined) return;
  fs.mkdirSync(folder, { recursive: true });
  fs.appendFileSync(path.join(folder, 'measure-windows.txt'), `${start / 1000n} ${end / 1000n}\n`);
}

export async function run(): Promise<BenchResult[]> {
  if (!fs.existsSync(RUNLOOM_CLI)) throw new Error(`${RUNLOOM_CLI} is missing: run 'npm run build' first (npm run bench does)`);
  const admin = await connectAdmin('multi-instance');
  if (!admin) return [];
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-multi-'));
  const vendor = await startFakeVendor(workDir);
  try {
    const figures = new Map<Setup, Figures[]>(Object.values(SETUPS).map((setup) => [setup, []]));
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const setup of Object.values(SETUPS)) {
        const measured = await measure(setup, admin, vendor.url, workDir);
        figures.get(setup)!.push(measured);
        process.stderr.write(
          `  multi-instance round ${round + 1}, ${setup.label}: ${measured.runsPerSecond.toFixed(0)} runs/s, server CPU ${measured.serverCpuMsPerRun.toFixed(2)} ms/run, ` +
            `${measured.transactionsPerRun.toFixed(1)} database transactions/run, ` +
            `${measured.switchesPerRun.voluntary.toFixed(2)} + ${measured.switchesPerRun.involuntary.toFixed(2)} main-thread switches/run (idle + preempted)` +
            (measured.instructionsPerRun
              ? `, ${(measured.instructionsPerRun.all / 1e6).toFixed(2)} M instructions/run (main threads ${(measured.instructionsPerRun.mainThread / 1e6).toFixed(2)} M)`
              : '') +
            '\n',
        );
      }
    }
    const medianOf = (setup: Setup, figure: 'runsPerSecond' | 'serverCpuMsPerRun') => median(figures.get(setup)!.map((entry) => entry[figure]));
    const { one, two, twoOneBusy, oneHalfLoad } = SETUPS;
    const results = [
      benchResult({
        name: 'multi-instance: completed async runs/s on PostgreSQL, two instances / one (2 cores shared with the database)',
        value: medianOf(two, 'runsPerSecond'),
        baseline: medianOf(one, 'runsPerSecond'),
        goal: null,
        unit: '/s',
      }),
      benchResult({
        name: 'multi-instance: server CPU per completed run, two instances / one',
        value: medianOf(two, 'serverCpuMsPerRun'),
        baseline: medianOf(one, 'serverCpuMsPerRun'),
        goal: { of: 'ratio', atMost: 1.2 },
        unit: 'ms',
      }),
      // What the second instance's polls, liveness looks and event notices cost, apart from what
      // each process loses by batching half the load.
      benchResult({
        name: 'multi-instance: server CPU per completed run, two instances with every run sent to one / one instance',
        value: medianOf(twoOneBusy, 'serverCpuMsPerRun'),
        baseline: medianOf(one, 'serverCpuMsPerRun'),
        goal: { of: 'ratio', atMost: 1.2 },
        unit: 'ms',
      }),
      // What a process loses by batching half the load (as each of two instances gets it), apart
      // from what two busy servers cost each other on this machine's cores.
      benchResult({
        name: `multi-instance: server CPU per completed run, one instance with ${oneHalfLoad.clients} clients / with ${one.clients}`,
        value: medianOf(oneHalfLoad, 'serverCpuMsPerRun'),
        baseline: medianOf(one, 'serverCpuMsPerRun'),
        goal: null,
        unit: 'ms',
      }),
    ];
    if (figures.get(one)![0]!.instructionsPerRun === undefined) return results;
    // Under valgrind the CPU figures above say nothing; these say whether a configuration does more
    // work per run. The main threads': the other threads' count follows when V8's compiles happen,
    // which valgrind's slowness moves into the measure, while natively they take 0.05-0.07 ms a run in
    // every configuration.
    const instructions = (setup: Setup) => median(figures.get(setup)!.map((entry) => entry.instructionsPerRun!.mainThread / 1e6));
    return [
      ...results,
      ...[two, twoOneBusy, oneHalfLoad].map((setup) =>
        benchResult({
          name: `multi-instance: instructions the servers' main threads executed per completed run, ${setup.label} / ${one.label}`,
          value: instructions(setup),
          baseline: instructions(one),
          goal: null,
          unit: 'M',
        }),
      ),
    ];
  } finally {
    await vendor.stop();
    await admin.end();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}
