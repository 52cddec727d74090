import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../packages/core/test-support/postgres-test-store';
import { createRunloom, isFinished, MAX_RUN_ATTEMPTS, type Runloom, type RunView } from '../packages/core/src/index';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { startCrashChild } from './support/crash-child';
import { waitUntil } from './support/wait';

const CHILD = path.join(__dirname, 'fixtures', 'run-crash-child.ts');
const ACCOUNT = 'acct-crash';

interface Callback {
  type: string;
  data: { id: string; status: string; error: { code: string } | null };
}

/** A loopback receiver of run callbacks. */
async function startCallbackSink(): Promise<{ url: string; received: Callback[]; waitFor(count: number): Promise<void>; close(): Promise<void> }> {
  const received: Callback[] = [];
  let wake = (): void => {};
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push(JSON.parse(body) as Callback);
      res.writeHead(204).end();
      wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    async waitFor(count) {
      while (received.length < count) await new Promise<void>((resolve) => (wake = resolve));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}


/** The run once it reaches a final state; waitUntil's bound fails a run that never does. */
async function waitFinished(runloom: Runloom, id: string): Promise<RunView> {
  let run = await runloom.runs.get(ACCOUNT, id);
  await waitUntil(async () => {
    run = await runloom.runs.get(ACCOUNT, id);
    return isFinished(run.status);
  }, `run ${id} to finish after the restart`, 20_000);
  return run;
}

for (const store of ['the embedded store', 'PostgreSQL'] as const) {
  describe(`runs across kill -9 on ${store}`, function () {
    this.timeout(60_000);
    let dataDir: string;
    let schema: TestSchema | undefined;
    let databaseUrl: string | undefined;
    let fake: FakeVendorServer;
    let sink: Awaited<ReturnType<typeof startCallbackSink>>;
    let runloom: Runloom | undefined;
    const startChild = (args: string[]) => startCrashChild(CHILD, args, databaseUrl);
    const restart = () => createRunloom({ dataDir, databaseUrl, allowPrivateNetwork: true });

    beforeEach(async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-'));
      if (store === 'PostgreSQL') {
        schema = createTestSchema();
        databaseUrl = `${TEST_DATABASE_URL}?schema=${schema.schema}`;
      }
      fake = await startFakeVendor('openai');
      sink = await startCallbackSink();
    });
    afterEach(async () => {
      await runloom?.close();
      runloom = undefined;
      await Promise.all([fake.close(), sink.close()]);
      await schema?.drop();
      schema = undefined;
      databaseUrl = undefined;
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it('resumes every queued and running run after a restart and sends each callback', async () => {
      // Three runs hang at the vendor (the child's account slots); three wait queued in line behind
      // them, two more are parked without a job.
      fake.reply({ type: 'hang' }, { type: 'hang' }, { type: 'hang' });
      const child = await startChild([dataDir, 'submit', ACCOUNT, JSON.stringify(fake.credentials), sink.url, '8']);
      const ids = child.line.replace(/^submitted /, '').split(' ');
      assert.equal(ids.length, 8);
      await fake.waitForRequests(3);
      await child.kill();
      assert.equal(sink.received.length, 0);

      runloom = await restart();
      const runs = await Promise.all(ids.map((id) => waitFinished(runloom!, id)));
      assert.deepEqual(
        runs.map((run) => run.status),
        ids.map(() => 'succeeded'),
      );
      for (const run of runs) assert.equal(run.outputs[0]?.text_value, 'Hello from openai');
      // The three interrupted calls are made again, the five queued runs for the first time.
      assert.equal(fake.requests.length, 3 + 8);

      await sink.waitFor(8);
      assert.deepEqual(sink.received.map((callback) => callback.data.id).sort(), [...ids].sort());
      for (const callback of sink.received) assert.deepEqual([callback.type, callback.data.status], ['run.completed', 'succeeded']);
    });

    /** Submits one run (with a callback to `callbackUrl`, none for '-') and kills its server in each of its attempts' vendor calls: its id. */
    async function interruptedEveryAttempt(callbackUrl: string): Promise<string> {
      fake.reply(...Array.from({ length: MAX_RUN_ATTEMPTS }, () => ({ type: 'hang' as const })));
      const first = await startChild([dataDir, 'submit', ACCOUNT, JSON.stringify(fake.credentials), callbackUrl, '1']);
      const id = first.line.replace(/^submitted /, '');
      await fake.waitForRequests(1);
      await first.kill();
      for (let attempt = 2; attempt <= MAX_RUN_ATTEMPTS; attempt++) {
        const resumed = await startChild([dataDir, 'resume']);
        await fake.waitForRequests(attempt);
        await resumed.kill();
      }
      return id;
    }

    it(`fails a run interrupted ${MAX_RUN_ATTEMPTS} times with 'interrupted' instead of resuming it again, and still sends its callback`, async () => {
      const id = await interruptedEveryAttempt(sink.url);

      runloom = await restart();
      const run = await waitFinished(runloom, id);
      assert.equal(run.status, 'failed');
      assert.equal(run.error?.code, 'interrupted');
      assert.match(run.error?.message ?? '', /interrupted 3 times/);
      assert.equal(fake.requests.length, MAX_RUN_ATTEMPTS);
      await sink.waitFor(1);
      assert.deepEqual([sink.received[0]!.data.id, sink.received[0]!.data.status, sink.received[0]!.data.error?.code], [id, 'failed', 'interrupted']);
    });

    it(`resumes a run without a callback (on the embedded store it has no job) and fails it after ${MAX_RUN_ATTEMPTS} interruptions too`, async () => {
      const id = await interruptedEveryAttempt('-');

      runloom = await restart();
      const run = await waitFinished(runloom, id);
      assert.deepEqual([run.status, run.error?.code], ['failed', 'interrupted']);
      assert.match(run.error?.message ?? '', /interrupted 3 times/);
      assert.equal(fake.requests.length, MAX_RUN_ATTEMPTS);
    });
  });
}
