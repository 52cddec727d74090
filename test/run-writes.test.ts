import assert from 'node:assert/strict';
import { ContainerModule } from 'inversify';
import { Database, type WriteOp } from '../packages/core/src/ports/database';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { createRunnable, promptConfig, submit, useFakeVendor, waitForRun, type Json } from './support/runs';
import { waitUntil } from './support/wait';

/**
 * Storage cost of one run, pinned: every `Database.write` is a durable commit (an fsync on the
 * embedded store), so a new write on the run path is a cost to justify, not an accident.
 */
describe('durable writes of one run', function () {
  this.timeout(20_000);
  let t: TestRunloom;
  let openai: FakeVendorServer;
  const writes: (readonly WriteOp[])[] = [];
  let store: Database;

  /** Records every write batch the store is given, on the store the container builds. */
  const countingModule = new ContainerModule(({ onActivation }) => {
    onActivation(Database, (_context, database: Database) => {
      store = database;
      const write = database.write.bind(database);
      database.write = (ops, options) => {
        writes.push(ops);
        return write(ops, options);
      };
      return database;
    });
  });

  before(async () => {
    openai = await startFakeVendor('openai');
    // The fake listens on loopback: let exactly it in, as --egress-allow does for a self-hosted vendor.
    t = await startTestRunloom({ modules: [countingModule], egressAllow: [new URL(openai.baseUrl).host] });
    await useFakeVendor(t, openai);
  });
  after(async () => {
    await t?.close();
    await openai?.close();
  });

  /** The write batches of one async run of `body` from submission to its job's end, as `collection/op` lists. */
  async function batchesOf(body: Json): Promise<string[][]> {
    const runnable = await createRunnable(t, promptConfig(openai));
    openai.reply({ type: 'text', chunks: ['hi'] });
    writes.length = 0;
    const response = await submit(t, runnable.id, body);
    const id = ((await response.json()) as Json).id as string;
    assert.equal((await waitForRun(t, id)).status, 'succeeded');
    // The job's end may land a moment after the run reads as finished; the queue then holds nothing.
    await waitUntil(async () => (await store.count('jobs', { kind: 'run.execute' })) === 0, 'the run job to end');
    return writes.map((ops) => ops.map((op) => `${op.collection}/${op.op}`));
  }

  it('an async run without a callback, a slot free: accept (run as running, no job: the store is not shared), outcome', async () => {
    assert.deepEqual(await batchesOf({}), [['runs/insert'], ['runs/replace']]);
  });
});
