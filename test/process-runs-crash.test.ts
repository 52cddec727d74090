import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../packages/core/test-support/postgres-test-store';
import { createRunloom, type Runloom } from '../packages/core/src/index';
import type { ProcessRunView } from '../packages/core/src/domain/processes/process-run-record';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { startCrashChild } from './support/crash-child';
import { waitUntil } from './support/wait';

const CHILD = path.join(__dirname, '..', 'packages', 'core', 'test-support', 'process-crash-child.ts');
const ACCOUNT = 'acct-process-crash';


function taskOf(run: ProcessRunView, phaseId: string, taskId: string) {
  return run.phases.find((phase) => phase.id === phaseId)!.tasks.find((task) => task.id === taskId)!;
}

for (const store of ['the embedded store', 'PostgreSQL'] as const) {
  describe(`process runs across kill -9 on ${store}`, function () {
    this.timeout(60_000);
    let dataDir: string;
    let schema: TestSchema | undefined;
    let databaseUrl: string | undefined;
    let fake: FakeVendorServer;
    let runloom: Runloom | undefined;

    beforeEach(async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-'));
      if (store === 'PostgreSQL') {
        schema = createTestSchema();
        databaseUrl = `${TEST_DATABASE_URL}?schema=${schema.schema}`;
      }
      fake = await startFakeVendor('openai');
    });
    afterEach(async () => {
      await runloom?.close();
      runloom = undefined;
      await fake.close();
      await schema?.drop();
      schema = undefined;
      databaseUrl = undefined;
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    /** The run once `holds` is true of it; waitUntil's bound fails one that never gets there. */
    async function waitFor(workspaceId: string, runId: string, holds: (run: ProcessRunView) => boolean, what: string): Promise<ProcessRunView> {
      let run = await runloom!.processes.get(ACCOUNT, workspaceId, runId);
      await waitUntil(async () => holds((run = await runloom!.processes.get(ACCOUNT, workspaceId, runId))), what, 20_000);
      return run;
    }

    it('a run waiting on an approval still waits after the restart, goes on when approved, and its finished task never runs again', async () => {
      const child = await startCrashChild(CHILD, [dataDir, 'approval', ACCOUNT, JSON.stringify(fake.credentials), fake.model], databaseUrl);
      const [, workspaceId, runId] = child.line.split(' ') as [string, string, string];
      assert.equal(fake.requests.length, 1);
      await child.kill();

      runloom = await createRunloom({ dataDir, databaseUrl, allowPrivateNetwork: true });
      const parked = await runloom.processes.get(ACCOUNT, workspaceId, runId);
      assert.equal(parked.status, 'waiting_approval');
      assert.deepEqual([taskOf(parked, 'first', 'ask').status, taskOf(parked, 'first', 'ask').attempts], ['succeeded', 1]);
      assert.equal(taskOf(parked, 'second', 'gate').status, 'waiting_approval');
      await runloom.processes.approve(ACCOUNT, workspaceId, runId, {});
      const done = await waitFor(workspaceId, runId, (run) => run.status === 'succeeded', 'the approved run to succeed');
      assert.equal(taskOf(done, 'first', 'ask').attempts, 1);
      assert.equal(fake.requests.length, 1);
    });

    it('a run killed mid-task resumes that task (following the run it had started) and never runs its finished task again', async () => {
      // The prompt task's call is answered; the runnable task's run hangs at the vendor.
      fake.reply({ type: 'text', chunks: ['first answer'] }, { type: 'hang' });
      const child = await startCrashChild(CHILD, [dataDir, 'runnable', ACCOUNT, JSON.stringify(fake.credentials), fake.model], databaseUrl);
      const [, workspaceId, runId] = child.line.split(' ') as [string, string, string];
      await fake.waitForRequests(2);
      await child.kill();

      runloom = await createRunloom({ dataDir, databaseUrl, allowPrivateNetwork: true });
      const done = await waitFor(workspaceId, runId, (run) => run.status === 'succeeded', 'the resumed run to succeed');
      assert.deepEqual([taskOf(done, 'first', 'ask').attempts, taskOf(done, 'first', 'ask').output], [1, 'first answer']);
      const sub = taskOf(done, 'second', 'sub');
      assert.deepEqual([sub.status, sub.attempts], ['succeeded', 1]);
      // One sub run, resumed once by the run engine: the prompt call, the hung call, the resumed one.
      assert.equal(fake.requests.length, 3);
      const subRuns = await runloom.runs.list(ACCOUNT, {});
      assert.equal(subRuns.length, 1);
      assert.deepEqual(sub.output, subRuns[0]!.outputs);
    });
  });
}
