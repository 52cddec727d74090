import assert from 'node:assert/strict';
import { type FakeVendorServer, startFakeVendor } from '@runloom/core/testing';
import { startTestServer, type TestServer } from '../../../../test/support/server';
import { RemoteBackend } from './remote-backend';
import type { ReplyChunkBatch } from './runloom-backend';

const ACCOUNT = 'acct-editor';

/** Every batch of a reply until its end. */
async function collect(reply: AsyncIterable<ReplyChunkBatch>): Promise<Record<string, unknown>[]> {
  const chunks: Record<string, unknown>[] = [];
  for await (const batch of reply) chunks.push(...batch.chunks);
  return chunks;
}

/** The extension's views on a real `runloom serve` on loopback, through its HTTP API only. */
describe('RemoteBackend (the views on a remote runloom serve)', function () {
  this.timeout(30_000);
  let server: TestServer;
  let vendor: FakeVendorServer;
  let credentials: { clientId: string; clientSecret: string };
  let workspaceId: string;

  before(async () => {
    vendor = await startFakeVendor('openai');
    server = await startTestServer({ allowPrivateNetwork: true });
    const client = await server.runloom.auth.createClient(ACCOUNT);
    credentials = { clientId: client.client_id, clientSecret: client.client_secret };
    await server.runloom.providers.put(ACCOUNT, 'openai', { enabled: true, credentials: vendor.credentials });
    workspaceId = (await server.runloom.workspaces.create(ACCOUNT, { name: 'remote project' }, 'test')).id;
    await server.runloom.commands.create(ACCOUNT, workspaceId, { trigger: 'greet', category: 'writing', type: 'prompt', template: 'Greet {{name}}', args: [{ name: 'name', required: true }], model: { provider: 'openai', model: 'gpt-4o' } } as never);
  });

  after(async () => {
    await server?.close();
    await vendor?.close();
  });

  it('refuses wrong client credentials with the server\'s answer, naming the client', async () => {
    await assert.rejects(RemoteBackend.connect({ url: server.url, clientId: credentials.clientId, clientSecret: 'guess-8d1f' }), (error: Error) => {
      assert.match(error.message, new RegExp(`refused the client ${credentials.clientId}: 401 unknown client or wrong client secret`));
      assert.ok(!error.message.includes('guess-8d1f'), 'the secret is not repeated');
      return true;
    });
  });

  it('lists the account\'s workspaces, creates a thread and streams its reply as the UI message stream, with the events of the workspace', async () => {
    const backend = await RemoteBackend.connect({ url: server.url, ...credentials });
    try {
      assert.deepEqual(
        backend.workspaces.map(({ workspaceId: id, name }) => ({ id, name })),
        [{ id: workspaceId, name: 'remote project' }],
      );
      const events: string[] = [];
      let threadSaved: () => void = () => {};
      const saved = new Promise<void>((resolve) => (threadSaved = resolve));
      const subscription = backend.subscribe(workspaceId, ({ event }) => {
        events.push(event.type);
        if (event.type === 'thread.updated' && event.message_count === 2) threadSaved();
      });
      // The stream is open once the server has answered it; a first event proves it is delivered.
      const thread = await backend.createThread(workspaceId, 'Remote hello');
      vendor.reply({ type: 'text', chunks: ['Hello', ' from afar'] });
      const sent = await backend.sendMessage(workspaceId, thread.threadId, 'Say hello', { provider: 'openai', model: 'gpt-4o' });
      assert.ok(sent.streamId, 'the start chunk names the stream');
      const chunks = await collect(sent.reply);
      assert.equal(chunks[0]!.type, 'start');
      assert.equal(chunks.filter((chunk) => chunk.type === 'text-delta').map((chunk) => chunk.delta).join(''), 'Hello from afar');
      assert.equal(chunks.at(-1)!.type, 'finish');
      const { messages } = await backend.threadMessages(workspaceId, thread.threadId);
      assert.deepEqual(
        messages.map(({ role, text, status }) => ({ role, text, status })),
        [
          { role: 'user', text: 'Say hello', status: undefined },
          { role: 'assistant', text: 'Hello from afar', status: undefined },
        ],
      );
      await saved;
      subscription.unsubscribe();
      assert.ok(events.includes('thread.updated'), `events: ${events.join(', ')}`);
      const [listed] = await backend.listThreads(workspaceId);
      assert.deepEqual({ title: listed!.title, streaming: listed!.streaming }, { title: 'Remote hello', streaming: false });
      assert.equal(await backend.stopReply(workspaceId, thread.threadId), false, 'nothing streams any more');
    } finally {
      await backend.close();
    }
  });

  it('runs a command with its output streamed, and a process run approved to its end', async () => {
    const backend = await RemoteBackend.connect({ url: server.url, ...credentials });
    // Opened first: by the time the process run starts, the command's run has long been delivered on it.
    let changed: () => void = () => {};
    const subscription = backend.subscribe(workspaceId, ({ event }) => {
      if (event.type === 'process.run.updated' || event.type === 'task.updated') changed();
    });
    /** The run as the view lists it once its status satisfies `accept` (its events say when to look again). */
    const runWhen = async (runId: string, accept: (status: string) => boolean) => {
      for (;;) {
        const next = new Promise<void>((resolve) => (changed = resolve));
        const run = (await backend.listProcessRuns(workspaceId)).find((candidate) => candidate.runId === runId);
        if (run && accept(run.status)) return run;
        await next;
      }
    };
    try {
      const [greet] = await backend.listCommands(workspaceId);
      assert.deepEqual({ trigger: greet!.trigger, category: greet!.category, type: greet!.type }, { trigger: 'greet', category: 'writing', type: 'prompt' });
      vendor.reply({ type: 'text', chunks: ['Hello', ', Ada'] });
      const { updates } = await backend.executeCommand(workspaceId, 'greet', ['Ada']);
      let output = '';
      let end: { status: string } | undefined;
      for await (const update of updates) {
        if (update.type === 'output') output += update.text;
        else end = update;
      }
      assert.deepEqual({ output, status: end?.status }, { output: 'Hello, Ada', status: 'succeeded' });

      const spec = { name: 'Release', phases: [{ id: 'ship', name: 'Ship', tasks: [{ id: 'sign-off', name: 'Sign off', type: 'approval', input: { message: 'Ship it?' } }] }] };
      const started = await backend.startProcessRun(workspaceId, 'release', spec);
      assert.equal(started.processId, 'release');
      const waiting = await runWhen(started.runId, (status) => status === 'waiting_approval');
      assert.equal(waiting.phases[0]!.tasks[0]!.status, 'waiting_approval');
      await backend.actOnProcessRun(workspaceId, started.runId, 'approve', { phaseId: 'ship', taskId: 'sign-off' });
      assert.equal((await runWhen(started.runId, (status) => status === 'succeeded')).status, 'succeeded');
    } finally {
      subscription.unsubscribe();
      await backend.close();
    }
  });
});
