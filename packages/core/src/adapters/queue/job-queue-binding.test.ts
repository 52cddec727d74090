import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ContainerModule } from 'inversify';
import { Clock } from '../../ports/clock';
import { JobQueue } from '../../ports/job-queue';
import { createRunloom, type Runloom } from '../../runloom';
import { ManualClock } from '../../testing/manual-clock';
import { DatabaseJobQueue } from './database-job-queue';

describe('the default JobQueue binding', function () {
  this.timeout(60_000);
  let dataDir: string;
  let runloom: Runloom | undefined;
  beforeEach(() => {
    dataDir = mkdtempSync(`${os.tmpdir()}/runloom-`);
  });
  afterEach(async () => {
    await runloom?.close();
    runloom = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is a DatabaseJobQueue that createRunloom starts and close stops', async () => {
    runloom = await createRunloom({ dataDir });
    const queue = runloom.container.get<JobQueue>(JobQueue);
    assert.ok(queue instanceof DatabaseJobQueue);
    assert.equal(queue.running, true);
    const done = new Promise<unknown>((resolve) => queue.register('binding-test', async (payload) => resolve(payload)));
    await queue.enqueue('binding-test', { hello: 'queue' });
    assert.deepEqual(await done, { hello: 'queue' });
    await runloom.close();
    assert.equal(queue.running, false);
  });

  it('keeps waiting jobs across a restart on the same data dir', async () => {
    runloom = await createRunloom({ dataDir });
    await runloom.container.get<JobQueue>(JobQueue).enqueue('later-kind', { n: 42 });
    await runloom.close();
    runloom = await createRunloom({ dataDir });
    const queue = runloom.container.get<JobQueue>(JobQueue);
    assert.equal(await queue.depth(), 1);
    const done = new Promise<unknown>((resolve) => queue.register('later-kind', async (payload) => resolve(payload)));
    assert.deepEqual(await done, { n: 42 });
  });

  it('runs again, at once, a job whose process was killed mid-attempt (kill -9)', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '../../../test-support/queue-crash-child.ts'), dataDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const line = await new Promise<string>((resolve, reject) => {
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('\n')) resolve(stdout.split('\n')[0]!);
      });
      child.on('exit', (code) => reject(new Error(`child exited with ${code} before running the job: ${stderr}`)));
    });
    const [, jobId, attempt] = line.split(' ');
    assert.equal(attempt, '1');
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    await exited;

    // Not after the 30 s lease (the embedded store is this process's alone): on a clock that does not
    // move, a resume that waited for the lease, or for a poll, would never come.
    const clock = new ManualClock();
    const restarted = await createRunloom({ dataDir, modules: [new ContainerModule(({ rebind }) => void rebind(Clock).toConstantValue(clock))] });
    try {
      const queue = restarted.container.get<JobQueue>(JobQueue);
      const resumed = new Promise<{ jobId: string; attempt: number; payload: unknown }>((resolve) =>
        queue.register('crash-test', async (payload, context) => resolve({ jobId: context.jobId, attempt: context.attempt, payload })),
      );
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the killed job was not run again while the clock stood still')), 10_000);
      });
      assert.deepEqual(await Promise.race([resumed, bound]).finally(() => clearTimeout(timer)), { jobId, attempt: 2, payload: { survives: 'kill -9' } });
    } finally {
      await clock.advanceUntil(restarted.close());
    }
  });
});
