import fs from 'node:fs';
import { Logger as GraphileLogger, run as runGraphileWorker, type Runner } from 'graphile-worker';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { SystemClock } from '../packages/core/src/adapters/node/system-clock';
import { UuidV7Generator } from '../packages/core/src/adapters/node/uuid-v7-generator';
import { openPostgresDatabase, type PostgresDatabase } from '../packages/core/src/adapters/postgres/postgres-database';
import { DatabaseJobQueue, jobMigrations } from '../packages/core/src/adapters/queue/database-job-queue';
import { type BenchResult, benchResult } from './bench-result';
import { median } from './child-server';
import { BENCH_DATABASE_URL, connectAdmin, createScratchDatabase } from './scratch-database';

/**
 * The `JobQueue` workload on PostgreSQL: Runloom's `DatabaseJobQueue` on `PostgresDatabase` beside
 * pg-boss and graphile-worker, each in this process on a database of its own, side by side, ROUNDS
 * times (medians reported). Each engine gets 10 handlers at a time and polls every 500 ms.
 * - throughput: JOBS jobs, each enqueued in the submitting transaction together with an
 *   application row (`bench_orders`), 10 producers at once, while the worker claims and completes
 *   them: jobs/s from the first enqueue to the last completion; the database CPU per job is the CPU
 *   time the PostgreSQL backends of the engine's database used meanwhile (/proc, every connection
 *   of the producers and the worker; pg_stat_statements is not loaded on this server), and the
 *   client CPU per job this process's.
 * - claim latency: PACED jobs enqueued one every 10 ms — 80 % due at once, 10 % delayed by
 *   0.3–1 s, 10 % failing their first attempt and retried after a backoff of 1 s (graphile-worker's
 *   backoff is fixed at e^attempts s) — p99 of handler start − the moment the job was due.
 * pg-boss 10 fetches a batch per poll and waits for the next poll when it has handled it: it runs
 * 10 workers fetching batches of 10 (its documented way to throughput). graphile-worker 0.17 is
 * woken by NOTIFY. Runloom's queue claims a job in the enqueueing write when this instance has a
 * free handler. `BENCH_PG_QUEUE_JOBS` (default 3000), `BENCH_PG_QUEUE_ROUNDS` (default 3).
 */

const JOBS = Number(process.env.BENCH_PG_QUEUE_JOBS ?? 3000);
const ROUNDS = Number(process.env.BENCH_PG_QUEUE_ROUNDS ?? 3);
const PACED = 400;
const PACE_MS = 10;
const CONCURRENCY = 10;
const POLL_MS = 500;
const RETRY_BACKOFF_MS = 1000;
const QUEUE = 'bench';

interface BenchJob {
  n: number;
  /** Fails its first attempt. */
  fail: boolean;
}

/** One engine behind the calls the workload makes. */
interface Engine {
  /** Enqueues `job` in one transaction with the application row `order-<n>`, due at `runAt` when given. */
  enqueue(job: BenchJob, runAt?: Date): Promise<void>;
  /** Rows of `bench_orders` (the application writes that committed with their jobs). */
  orders(): Promise<number>;
  stop(): Promise<void>;
}

/** What the handler reports: the attempt starting, and whether it is a job's first. */
type Handler = (job: BenchJob, firstAttempt: boolean) => Promise<void>;

interface EngineFactory {
  name: string;
  /** Due time of a retry after a first attempt failed at `failedAt`. */
  retryDueAt(failedAt: number): number;
  start(url: string, handler: Handler): Promise<Engine>;
}

const runloomEngine: EngineFactory = {
  name: 'runloom DatabaseJobQueue',
  retryDueAt: (failedAt) => failedAt + RETRY_BACKOFF_MS,
  async start(url, handler) {
    const database: PostgresDatabase = await openPostgresDatabase(url);
    await database.migrate([...jobMigrations, { id: 'bench/001-orders', steps: [{ createCollection: 'bench_orders', fields: {} }] }]);
    const quiet = { info() {}, warn() {}, error() {} };
    const queue = new DatabaseJobQueue({ database, clock: new SystemClock(), ids: new UuidV7Generator(), logger: quiet, pollIntervalMs: POLL_MS });
    queue.register<BenchJob>(QUEUE, (job, context) => handler(job, context.attempt === 1), { concurrency: CONCURRENCY });
    await queue.start();
    return {
      enqueue: async (job, runAt) => {
        await queue.enqueue(QUEUE, job, {
          retry: { maxAttempts: 2, initialBackoffMs: RETRY_BACKOFF_MS, jitter: 0 },
          ...(runAt ? { runAt } : {}),
          with: [{ op: 'insert', collection: 'bench_orders', doc: { id: `order-${job.n}`, n: job.n } }],
        });
      },
      orders: () => database.count('bench_orders'),
      async stop() {
        await queue.stop();
        await database.close();
      },
    };
  },
};

/** The application's table and a pool of connections that write it, for the engines that take a SQL transaction. */
async function applicationPool(url: string): Promise<pg.Pool> {
  const pool = quietPool(url);
  await pool.query('CREATE TABLE bench_orders (id text PRIMARY KEY, n integer NOT NULL)');
  return pool;
}

const pgBossEngine: EngineFactory = {
  name: 'pg-boss',
  retryDueAt: (failedAt) => failedAt + RETRY_BACKOFF_MS,
  async start(url, handler) {
    const pool = await applicationPool(url);
    const boss = new PgBoss({ connectionString: url, max: CONCURRENCY, supervise: true, schedule: false });
    let stopping = false;
    // Once stopping, a connection it still had is ended by the database's drop: no news.
    boss.on('error', (error) => stopping || process.stderr.write(`  pg-boss: ${error.message}\n`));
    await boss.start();
    await boss.createQueue(QUEUE, { name: QUEUE, retryLimit: 1, retryDelay: RETRY_BACKOFF_MS / 1000, retryBackoff: false });
    for (let worker = 0; worker < CONCURRENCY; worker += 1) {
      await boss.work<BenchJob>(QUEUE, { batchSize: CONCURRENCY, pollingIntervalSeconds: POLL_MS / 1000, includeMetadata: true }, async (jobs) => {
        await Promise.all(
          jobs.map(async (job) => {
            try {
              await handler(job.data, job.retryCount === 0);
            } catch (error) {
              // Failed alone, so the rest of the batch completes.
              await boss.fail(QUEUE, job.id, { message: (error as Error).message });
            }
          }),
        );
      });
    }
    return {
      enqueue: (job, runAt) =>
        transaction(pool, async (client) => {
          await client.query('INSERT INTO bench_orders (id, n) VALUES ($1, $2)', [`order-${job.n}`, job.n]);
          await boss.send(QUEUE, job, { ...(runAt ? { startAfter: runAt } : {}), db: { executeSql: (text, values) => client.query(text, values) } });
        }),
      orders: async () => Number((await pool.query('SELECT count(*) AS n FROM bench_orders')).rows[0].n),
      async stop() {
        stopping = true;
        await boss.stop({ graceful: true, wait: true, close: true });
        await pool.end();
      },
    };
  },
};

const graphileWorkerEngine: EngineFactory = {
  name: 'graphile-worker',
  // Its backoff is fixed: e^attempts seconds after the failed attempt.
  retryDueAt: (failedAt) => failedAt + Math.exp(1) * 1000,
  async start(url, handler) {
    const pool = await applicationPool(url);
    // Its own pool, ended here: the runner leaves a pool it is given open.
    const workerPool = quietPool(url);
    const runner: Runner = await runGraphileWorker({
      pgPool: workerPool,
      concurrency: CONCURRENCY,
      pollInterval: POLL_MS,
      noHandleSignals: true,
      logger: new GraphileLogger(() => () => {}),
      taskList: {
        [QUEUE]: async (payload, helpers) => handler(payload as BenchJob, helpers.job.attempts === 1),
      },
    });
    return {
      enqueue: (job, runAt) =>
        transaction(pool, async (client) => {
          await client.query('INSERT INTO bench_orders (id, n) VALUES ($1, $2)', [`order-${job.n}`, job.n]);
          await client.query('SELECT graphile_worker.add_job($1, $2::json, run_at => $3, max_attempts => 2)', [QUEUE, JSON.stringify(job), runAt ?? null]);
        }),
      orders: async () => Number((await pool.query('SELECT count(*) AS n FROM bench_orders')).rows[0].n),
      async stop() {
        await runner.stop();
        await Promise.all([workerPool.end(), pool.end()]);
      },
    };
  },
};

/** A pool whose idle connections may be ended by the database's drop at the end of a round without crashing the bench. */
function quietPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: CONCURRENCY });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

async function transaction(pool: pg.Pool, body: (client: pg.PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await body(client);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

interface Figures {
  jobsPerSecond: number;
  p99ClaimMs: number;
  databaseCpuMsPerJob: number;
  clientCpuMsPerJob: number;
}

/** Linux reports process CPU time in clock ticks of 10 ms. */
const TICK_MS = 10;

/**
 * The CPU time the backends of `database` use while it runs: each backend's pid from
 * pg_stat_activity, its time from /proc, sampled every 100 ms so a connection closed meanwhile
 * keeps what it used until its last sample. `stop()` answers the ms used since `start`.
 */
function backendCpuMeter(admin: pg.Client, database: string): { stop(): Promise<number> } {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  let sampled = false;
  const sample = async (): Promise<void> => {
    const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database]);
    for (const { pid } of rows) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const ms = (Number(fields[11]) + Number(fields[12])) * TICK_MS;
        // A backend first seen after the start began at 0.
        if (!first.has(pid)) first.set(pid, sampled ? 0 : ms);
        last.set(pid, ms);
      } catch {
        // The backend ended between the query and the read.
      }
    }
    sampled = true;
  };
  let sampling = sample();
  const timer = setInterval(() => {
    sampling = sampling.then(sample);
  }, 100);
  return {
    async stop() {
      clearInterval(timer);
      await (sampling = sampling.then(sample));
      let total = 0;
      for (const [pid, ms] of last) total += ms - first.get(pid)!;
      return total;
    },
  };
}

/** One round of the workload on a fresh database. */
async function measure(factory: EngineFactory, admin: pg.Client): Promise<Figures> {
  const scratch = await createScratchDatabase(admin, BENCH_DATABASE_URL, 'runloom_qbench');
  const started = new Map<number, number[]>();
  const finished = new Set<number>();
  const failedAt = new Map<number, number>();
  let wake = (): void => {};
  const handler: Handler = async (job, firstAttempt) => {
    const now = performance.now();
    started.set(job.n, [...(started.get(job.n) ?? []), now]);
    if (job.fail && firstAttempt) {
      failedAt.set(job.n, performance.now());
      throw new Error('the first attempt fails');
    }
    finished.add(job.n);
    wake();
  };
  const allFinished = async (count: number): Promise<void> => {
    while (finished.size < count) await new Promise<void>((resolve) => (wake = resolve));
  };
  const engine = await factory.start(scratch.url, handler);
  try {
    // Throughput: JOBS jobs from 10 producers at once, all due now, none failing.
    const databaseCpu = backendCpuMeter(admin, scratch.name);
    const clientBefore = process.cpuUsage();
    const begun = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < JOBS) await engine.enqueue({ n: next++, fail: false });
      }),
    );
    await allFinished(JOBS);
    const seconds = (performance.now() - begun) / 1000;
    const databaseCpuMs = await databaseCpu.stop();
    const client = process.cpuUsage(clientBefore);

    // Claim latency: paced jobs, some delayed, some retried.
    const due = new Map<number, number>();
    for (let index = 0; index < PACED; index += 1) {
      const n = JOBS + index;
      const kind = index % 10;
      const job = { n, fail: kind === 1 };
      if (kind === 2) {
        const delayMs = 300 + ((index * 37) % 700);
        due.set(n, performance.now() + delayMs);
        await engine.enqueue(job, new Date(Date.now() + delayMs));
      } else {
        await engine.enqueue(job);
        due.set(n, performance.now());
      }
      await new Promise((resolve) => setTimeout(resolve, PACE_MS));
    }
    await allFinished(JOBS + PACED);
    const latencies: number[] = [];
    for (const [n, dueAt] of due) {
      const [first, second] = started.get(n)!;
      // A job due later is started no earlier than due (less a clock rounding); the enqueue that
      // claims a job at once starts it before the enqueue returns: 0.
      latencies.push(Math.max(0, first! - dueAt));
      if (second !== undefined) latencies.push(Math.max(0, second - factory.retryDueAt(failedAt.get(n)!)));
    }
    const ran = [...started.values()].reduce((sum, times) => sum + times.length, 0);
    const expectedRuns = JOBS + PACED + PACED / 10;
    if (ran !== expectedRuns) throw new Error(`${factory.name} ran ${ran} attempts, expected ${expectedRuns}: a job ran twice or not at all`);
    const orders = await engine.orders();
    if (orders !== JOBS + PACED) throw new Error(`${factory.name}: ${orders} application rows, expected ${JOBS + PACED}`);
    return {
      jobsPerSecond: JOBS / seconds,
      p99ClaimMs: percentile(latencies, 0.99),
      databaseCpuMsPerJob: databaseCpuMs / JOBS,
      clientCpuMsPerJob: (client.user + client.system) / 1000 / JOBS,
    };
  } finally {
    await engine.stop();
    await scratch.drop();
  }
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * fraction) - 1)]!;
}

export async function run(): Promise<BenchResult[]> {
  const admin = await connectAdmin('pg-queue');
  if (!admin) return [];
  try {
    const engines = [runloomEngine, pgBossEngine, graphileWorkerEngine];
    const rounds = new Map<string, Figures[]>(engines.map((engine) => [engine.name, []]));
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const engine of engines) {
        const figures = await measure(engine, admin);
        rounds.get(engine.name)!.push(figures);
        process.stderr.write(
          `  pg-queue round ${round + 1} ${engine.name}: ${figures.jobsPerSecond.toFixed(0)} jobs/s, p99 claim ${figures.p99ClaimMs.toFixed(1)} ms, ` +
            `database CPU ${figures.databaseCpuMsPerJob.toFixed(3)} ms/job, client CPU ${figures.clientCpuMsPerJob.toFixed(3)} ms/job\n`,
        );
      }
    }
    const medianOf = (engine: EngineFactory, figure: keyof Figures) => median(rounds.get(engine.name)!.map((figures) => figures[figure]));
    const results: BenchResult[] = [];
    for (const peer of [pgBossEngine, graphileWorkerEngine]) {
      results.push(
        benchResult({
          name: `pg-queue: jobs/s (transactional enqueue, claim, complete), runloom / ${peer.name}`,
          value: medianOf(runloomEngine, 'jobsPerSecond'),
          baseline: medianOf(peer, 'jobsPerSecond'),
          goal: { of: 'ratio', atLeast: 1 },
          unit: '/s',
        }),
        benchResult({
          name: `pg-queue: p99 claim latency (due → handler start; delayed and retried jobs too), runloom / ${peer.name}`,
          value: medianOf(runloomEngine, 'p99ClaimMs'),
          baseline: medianOf(peer, 'p99ClaimMs'),
          goal: { of: 'ratio', atMost: 1 },
          unit: 'ms',
        }),
        benchResult({
          name: `pg-queue: database CPU per job, runloom / ${peer.name}`,
          value: medianOf(runloomEngine, 'databaseCpuMsPerJob'),
          baseline: medianOf(peer, 'databaseCpuMsPerJob'),
          goal: { of: 'ratio', atMost: 1 },
          unit: 'ms',
        }),
      );
    }
    return results;
  } finally {
    await admin.end();
  }
}
