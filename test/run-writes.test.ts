import assert from 'node:assert/strict';
import { ContainerModule } from 'inversify';
import { Database, type WriteOp } from '../packages/core/src/ports/database';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { createRunnable, promptConfig, submit, uploadResource, useFakeVendor, waitForRun, type Json } from './support/runs';
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

  /** The write batches of one run of `body` (async unless told) from submission to its job's end, as `collection/op` lists. */
  async function batchesOf(body: Json, runnable?: Json, mode: 'async' | 'sync' = 'async'): Promise<string[][]> {
    runnable ??= await createRunnable(t, promptConfig(openai));
    openai.reply({ type: 'text', chunks: ['hi'] });
    writes.length = 0;
    const response = await submit(t, runnable.id, body, { mode });
    const answered = (await response.json()) as Json;
    assert.equal(mode === 'sync' ? answered.status : (await waitForRun(t, answered.id as string)).status, 'succeeded');
    // The job's end may land a moment after the run reads as finished; the queue then holds nothing.
    await waitUntil(async () => (await store.count('jobs', { kind: 'run.execute' })) === 0, 'the run job to end');
    return writes.map((ops) => ops.map((op) => `${op.collection}/${op.op}`));
  }

  it('an async run without a callback, a slot free: accept (run as running, no job: the store is not shared), outcome', async () => {
    assert.deepEqual(await batchesOf({}), [['runs/insert'], ['runs/replace']]);
  });

  it('a sync run without a callback or resources, a slot free: its outcome alone (nobody knows the run before it ends)', async () => {
    assert.deepEqual(await batchesOf({}, undefined, 'sync'), [['runs/insert']]);
  });

  it('a sync run embedding a resource: accept and outcome, so a stored active run holds the resource in use meanwhile', async () => {
    const runnable = await createRunnable(t, promptConfig(openai, { messages: [{ role: 'user', content: 'Read {{note}}' }] }, { inputs: [{ name: 'note', mime_types: ['text/plain'] }] }));
    const note = await uploadResource(t, 'a note', 'note.txt', 'text/plain');
    assert.deepEqual(await batchesOf({ resources: [{ name: 'note', resource: note.id }] }, runnable, 'sync'), [['runs/insert'], ['runs/replace']]);
  });
});
