import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRunloom, DomainError, isFinished, type Runloom } from '../packages/core/src/index';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { waitUntil } from './support/wait';

/**
 * The whole product through the core API alone, as a Node app embeds it (README "Embedding"): no
 * HTTP on our side, a real data dir, and a fake OpenAI speaking the real wire format.
 */
describe('the core API, embedded in a Node app', function () {
  this.timeout(60_000);
  const account = 'acct-embedded';
  let dataDir: string;
  let runloom: Runloom;
  let openai: FakeVendorServer;

  before(async () => {
    openai = await startFakeVendor('openai');
    dataDir = mkdtempSync(path.join(tmpdir(), 'runloom-core-api-'));
    runloom = await createRunloom({ dataDir, allowPrivateNetwork: true });
  });

  after(async () => {
    await runloom.close();
    await openai.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates a client whose credentials get a token that verifies to the account', async () => {
    const { client_id, client_secret } = await runloom.auth.createClient(account);
    const token = await runloom.auth.issueToken({ grant_type: 'client_credentials', client_id, client_secret });
    assert.equal(token.token_type, 'Bearer');
    assert.deepEqual(await runloom.auth.verify(token.access_token), { accountId: account, clientId: client_id });
  });

  it('runs a prompt on an embedded resource, labels its output and evaluates it, then keeps it all across a restart', async () => {
    const client = 'embedding-app';
    await runloom.providers.put(account, 'openai', { enabled: true, credentials: openai.credentials });
    const runnable = await runloom.runnables.create(account, {
      name: 'greet',
      config_content: [
        'type: prompt',
        `llms: [{model: ${openai.model}}]`,
        'inputs: [{name: who, mime_types: [text/plain], required: true}]',
        'prompt:',
        '  messages: [{role: user, content: "Greet {{who}}"}]',
      ].join('\n'),
    }, client);
    assert.equal(runnable.config_content_type, 'prompt');
    assert.equal((runnable.config_content_parsed as { llms: { provider: string }[] }).llms[0]!.provider, 'openai');

    const resource = await runloom.resources.upload(
      account,
      { name: 'who.txt', mime_type: 'text/plain' },
      new Blob(['Ada Lovelace']).stream(),
    );
    assert.equal(resource.size_bytes, 12);

    openai.reply({ type: 'text', chunks: ['Hello, ', 'Ada!'], usage: { input: 9, output: 3 } });
    const submitted = await runloom.runs.submit(account, runnable.id, { resources: [{ name: 'who', resource: resource.id }] }, 'sync');
    assert.equal(submitted.mode, 'sync');
    const run = submitted.mode === 'sync' ? submitted.run : assert.fail('expected a sync run');
    assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
    assert.equal(run.outputs[0]?.text_value, 'Hello, Ada!');
    assert.deepEqual(run.usage, { input_tokens: 9, output_tokens: 3 });
    const sent = (await openai.waitForRequests(1)).body as { messages: { content: unknown }[] };
    assert.match(JSON.stringify(sent.messages), /Greet Ada Lovelace/);

    await assert.rejects(runloom.runs.cancel(account, run.id), (error: unknown) => error instanceof DomainError && error.code === 'CONFLICT');
    await assert.rejects(runloom.runs.get('another-account', run.id), (error: unknown) => error instanceof DomainError && error.code === 'NOT_FOUND');

    const label = await runloom.goldLabels.create(account, run.id, { output_resource_name: run.outputs[0]!.name, text_value: 'Hello, Ada!' }, client);
    const evaluation = await runloom.evaluations.create(account, run.id, { gold_label_id: label.id, method: 'exact' });
    assert.deepEqual([evaluation.score, evaluation.passed], [1, true]);

    await runloom.close();
    runloom = await createRunloom({ dataDir, allowPrivateNetwork: true });
    assert.equal((await runloom.runs.get(account, run.id)).status, 'succeeded');
    assert.equal((await runloom.evaluations.get(account, run.id, evaluation.id)).passed, true);
    assert.equal((await runloom.resources.get(account, resource.id)).sha256, resource.sha256);
  });

  it('accepts an async run at once and finishes it in the background', async () => {
    const [runnable] = await runloom.runnables.list(account);
    openai.reply({ type: 'text', chunks: ['later'] });
    const resource = (await runloom.resources.list(account, { limit: 1, offset: 0 }))[0]!;
    const submitted = await runloom.runs.submit(account, runnable!.id, { resources: [{ name: 'who', resource: resource.id }] });
    assert.equal(submitted.mode, 'async');
    const id = submitted.mode === 'async' ? submitted.id : assert.fail('expected an async run');
    // Stop at any final state, so a failed run fails here naming its status rather than timing out.
    let status = (await runloom.runs.get(account, id)).status;
    await waitUntil(async () => {
      status = (await runloom.runs.get(account, id)).status;
      return isFinished(status);
    }, `async run ${id} to finish`, 20_000);
    assert.equal(status, 'succeeded');
  });
});
