import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { Database } from '../../ports/database';
import { JobQueue } from '../../ports/job-queue';
import { createRunloom, type Runloom } from '../../runloom';
import { PostgresDatabase } from './postgres-database';
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../../../test-support/postgres-test-store';

describe('databaseUrl: postgres://', function () {
  this.timeout(60_000);
  let dataDir: string;
  let schema: TestSchema;
  let databaseUrl: string;
  const instances: Runloom[] = [];
  const start = async (): Promise<Runloom> => {
    const runloom = await createRunloom({ dataDir, databaseUrl });
    instances.push(runloom);
    return runloom;
  };
  beforeEach(() => {
    dataDir = mkdtempSync(`${os.tmpdir()}/runloom-`);
    schema = createTestSchema();
    databaseUrl = `${TEST_DATABASE_URL}?schema=${schema.schema}`;
  });
  afterEach(async () => {
    for (const runloom of instances.splice(0)) await runloom.close();
    await schema.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps every record in PostgreSQL, and a restart finds the migrations applied', async () => {
    const first = await start();
    const database = first.container.get<Database>(Database);
    assert.ok(database instanceof PostgresDatabase);
    assert.equal(database.schema, schema.schema);
    const queue = first.container.get<JobQueue>(JobQueue);
    await queue.enqueue('pg-binding', { kept: true });
    await first.close();

    const second = await start();
    const restartedQueue = second.container.get<JobQueue>(JobQueue);
    assert.equal(await restartedQueue.depth(), 1);
    const payload = await new Promise((resolve) => restartedQueue.register('pg-binding', async (received) => resolve(received)));
    assert.deepEqual(payload, { kept: true });
  });

  it('shares the work between instances on one database: each job runs exactly once', async () => {
    const [left, right] = await Promise.all([start(), start()]);
    const jobs = 40;
    const runs = new Map<string, string[]>();
    let allRan = (): void => {};
    const everyJobRan = new Promise<void>((resolve) => (allRan = resolve));
    for (const [name, runloom] of [['left', left!], ['right', right!]] as const) {
      runloom.container.get<JobQueue>(JobQueue).register('shared', async (_payload, context) => {
        runs.set(context.jobId, [...(runs.get(context.jobId) ?? []), name]);
        if (runs.size === jobs) allRan();
        // A little work, so that both instances hold jobs at once.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }, { concurrency: 2 });
    }
    const enqueued = await Promise.all(
      Array.from({ length: jobs }, (_, n) => (n % 2 ? left! : right!).container.get<JobQueue>(JobQueue).enqueue('shared', { n })),
    );
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`only ${runs.size} of ${jobs} jobs ran within 20 s`)), 20_000);
    });
    await Promise.race([everyJobRan, bound]).finally(() => clearTimeout(timer));
    assert.equal(runs.size, enqueued.length);
    assert.deepEqual([...runs.values()].filter((workers) => workers.length !== 1), []);
    const workers = new Set([...runs.values()].flat());
    assert.deepEqual([...workers].sort(), ['left', 'right']);
  });

  it('refuses a URL of another database kind with a message saying what to use', async () => {
    await assert.rejects(createRunloom({ dataDir, databaseUrl: 'mysql://localhost/runloom' }), /databaseUrl must be a postgres:\/\/ or postgresql:\/\/ URL/);
  });
});
