import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { DefaultChatTransport, type UIMessage, type UIMessageChunk } from 'ai';
import { ContainerModule } from 'inversify';
import { ThreadStreamMarkers } from '../packages/core/src/domain/threads/thread-stream-markers';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { ManualClock } from '../packages/core/src/testing/manual-clock';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { startTestServer, type TestServer } from './support/server';
import { assemble, frameIds, gate, json, readAll, readChunks, readUntil, saveThread, textOf, workspaceWithVendor } from './support/threads';
import { waitUntil } from './support/wait';

/** docs/api.md#thread-streams: replies streamed as the AI SDK UI message stream, outliving their connection. */

const ACCOUNT = 'acct-a';
const TEXT = ['The ', 'quick ', 'brown ', 'fox ', 'jumps ', 'over ', 'the ', 'lazy ', 'dog.'];

/** A Runloom on real loopback HTTP with a token of ACCOUNT, and one workspace using `vendor`. */
async function serve(vendor: FakeVendorServer): Promise<{ server: TestServer; token: string; workspaceId: string; close(): Promise<void> }> {
  const server = await startTestServer({ rateLimit: 0, allowPrivateNetwork: true });
  const { client_id, client_secret } = await server.runloom.auth.createClient(ACCOUNT);
  const { access_token: token } = await server.runloom.auth.issueToken({ grant_type: 'client_credentials', client_id, client_secret });
  const facade = {
    runloom: server.runloom,
    request: (requestPath: string, init: RequestInit = {}) => fetch(`${server.url}${requestPath}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } }),
  };
  const workspaceId = await workspaceWithVendor(facade as unknown as TestRunloom, vendor);
  return { server, token, workspaceId, close: () => server.close() };
}

describe('thread streams', function () {
  this.timeout(60_000);

  for (const provider of ['openai', 'anthropic']) {
    describe(`on the ${provider} wire format`, () => {
      let vendor: FakeVendorServer;
      let app: Awaited<ReturnType<typeof serve>>;
      before(async () => {
        vendor = await startFakeVendor(provider);
        app = await serve(vendor);
      });
      after(async () => {
        await app?.close();
        await vendor?.close();
      });

      it('answers the UI message stream: the ai package parses every chunk and assembles exactly the vendor’s text, which the thread keeps', async () => {
        await saveThread(authed(app), app.workspaceId, 'plain');
        vendor.reply({ type: 'text', chunks: TEXT, usage: { input: 7, output: 9 } });
        const response = await post(app, { threadId: 'plain', message: 'Tell me about foxes', model: { provider, model: vendor.model } });
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
        assert.match(response.headers.get('content-type')!, /^text\/event-stream/);
        const chunks = await readChunks(response.body!);
        assert.deepEqual(
          chunks.map((chunk) => chunk.type),
          ['start', 'start-step', 'text-start', ...TEXT.map(() => 'text-delta'), 'text-end', 'finish-step', 'finish'],
        );
        const reply = await assemble(chunks);
        assert.equal(textOf(reply), TEXT.join(''));

        const thread = await getThread(app, 'plain');
        assert.deepEqual(thread.messages.map((message: UIMessage) => [message.role, textOf(message)]), [
          ['user', 'Tell me about foxes'],
          ['assistant', TEXT.join('')],
        ]);
        const saved = thread.messages[1];
        assert.equal(saved.id, reply!.id, 'the saved reply is the streamed message');
        assert.deepEqual(saved.parts, JSON.parse(JSON.stringify(reply!.parts)));
        assert.deepEqual(saved.metadata, {
          status: 'complete',
          model: { provider, model: vendor.model },
          streamId: (saved.metadata as { streamId: string }).streamId,
          usage: { input_tokens: 7, output_tokens: 9 },
          finishReason: 'stop',
        });
        const sent = vendor.requests.at(-1)!.body;
        assert.equal(JSON.stringify(sent.messages).includes('Tell me about foxes'), true, 'the history went to the vendor');
      });

      if (provider === 'anthropic') {
        it('streams thinking blocks as reasoning parts before the text, and saves them', async () => {
          await saveThread(authed(app), app.workspaceId, 'thinking');
          vendor.reply({ type: 'text', reasoning: ['Foxes ', 'are quick.'], chunks: TEXT });
          const response = await post(app, { threadId: 'thinking', message: 'Think first', model: { provider, model: vendor.model } });
          const chunks = await readChunks(response.body!);
          assert.deepEqual(
            chunks.map((chunk) => chunk.type).filter((type) => !type.endsWith('-delta')),
            ['start', 'start-step', 'reasoning-start', 'reasoning-end', 'text-start', 'text-end', 'finish-step', 'finish'],
          );
          const reply = await assemble(chunks);
          assert.deepEqual(
            reply!.parts.map((part) => [part.type, 'text' in part ? part.text : undefined]),
            [
              ['step-start', undefined],
              ['reasoning', 'Foxes are quick.'],
              ['text', TEXT.join('')],
            ],
          );
          assert.deepEqual((await getThread(app, 'thinking')).messages[1].parts, JSON.parse(JSON.stringify(reply!.parts)));
        });
      }

      it('is driven by DefaultChatTransport as useChat drives it: sendMessages streams the reply, reconnectToStream answers null once it is done', async () => {
        await saveThread(authed(app), app.workspaceId, 'chat');
        vendor.reply({ type: 'text', chunks: TEXT });
        const transport = chatTransport(app, provider, vendor.model);
        const user: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hi there' }] };
        const stream = await transport.sendMessages({ chatId: 'chat', messages: [user], trigger: 'submit-message', messageId: undefined, abortSignal: undefined });
        const chunks = await collect(stream);
        assert.equal(textOf(await assemble(chunks)), TEXT.join(''));
        assert.equal(await transport.reconnectToStream({ chatId: 'chat' }), null);
        const thread = await getThread(app, 'chat');
        assert.deepEqual(thread.messages[0], user, 'the client’s own message id is kept');
      });
    });
  }

  describe('outliving the connection', () => {
    let vendor: FakeVendorServer;
    let app: Awaited<ReturnType<typeof serve>>;
    let model: { provider: string; model: string };
    before(async () => {
      vendor = await startFakeVendor('openai');
      app = await serve(vendor);
      model = { provider: 'openai', model: vendor.model };
    });
    after(async () => {
      await app?.close();
      await vendor?.close();
    });

    it('keeps generating after the client disconnects, and saves the whole reply', async () => {
      await saveThread(authed(app), app.workspaceId, 'leaver');
      const held = gate();
      vendor.reply({ type: 'text', chunks: TEXT, gate: held.promise });
      const controller = new AbortController();
      const response = await post(app, { threadId: 'leaver', message: 'Hello', model }, controller.signal);
      const reader = response.body!.getReader();
      await readUntil(reader, '"text-delta"');
      controller.abort();
      await reader.cancel().catch(() => undefined);
      await waitUntil(async () => (await debug(app)).every((stream) => stream.subscribers === 0), 'the subscriber to leave');
      held.open();
      await waitUntil(async () => (await getThread(app, 'leaver')).messages[1]?.metadata?.status === 'complete', 'the reply to be saved');
      assert.equal(textOf((await getThread(app, 'leaver')).messages[1]), TEXT.join(''));
    });

    it('rejoins an active stream from its start and after Last-Event-ID; two subscribers follow one stream', async () => {
      await saveThread(authed(app), app.workspaceId, 'rejoin');
      const held = gate();
      vendor.reply({ type: 'text', chunks: TEXT, gate: held.promise });
      const first = await post(app, { threadId: 'rejoin', message: 'Hello', model });
      const firstReader = first.body!.getReader();
      let firstText = await readUntil(firstReader, '"text-delta"');
      const replay = await authed(app).request(`/workspace/${app.workspaceId}/threads/stream?threadId=rejoin`);
      assert.equal(replay.status, 200);
      assert.equal(replay.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
      const later = await authed(app).request(`/workspace/${app.workspaceId}/threads/stream?threadId=rejoin`, { headers: { 'last-event-id': '3' } });
      assert.equal(later.status, 200);
      assert.equal((await debug(app))[0]!.subscribers, 3);
      held.open();
      firstText += await readAll(firstReader);
      const [replayText, laterText] = await Promise.all([replay.text(), later.text()]);
      assert.equal(replayText, firstText, 'a rejoin from the start replays every frame');
      assert.equal(laterText, firstText.slice(firstText.indexOf('id: 4\n')), 'after Last-Event-ID 3 the frames from 4 on');
      assert.deepEqual(frameIds(laterText)[0], 4);
      const chunks = await readChunks(new Response(replayText).body!);
      assert.equal(textOf(await assemble(chunks)), TEXT.join(''));
      assert.equal((await authed(app).request(`/workspace/${app.workspaceId}/threads/stream?threadId=rejoin`)).status, 204);
    });

    it('lets DefaultChatTransport.reconnectToStream resume a reply still streaming', async () => {
      await saveThread(authed(app), app.workspaceId, 'resume');
      const held = gate();
      vendor.reply({ type: 'text', chunks: TEXT, gate: held.promise });
      const response = await post(app, { threadId: 'resume', message: 'Hello', model });
      const transport = chatTransport(app, 'openai', vendor.model);
      const resumed = await transport.reconnectToStream({ chatId: 'resume' });
      assert.ok(resumed, 'an active stream is resumed');
      held.open();
      const [chunks] = await Promise.all([collect(resumed), response.text()]);
      assert.equal(textOf(await assemble(chunks)), TEXT.join(''));
    });

    it('refuses a second POST on a thread that is streaming with 409 naming the active stream', async () => {
      await saveThread(authed(app), app.workspaceId, 'busy');
      const held = gate();
      vendor.reply({ type: 'text', chunks: TEXT, gate: held.promise });
      const first = await post(app, { threadId: 'busy', message: 'Hello', model });
      const [active] = await debug(app);
      const second = await post(app, { threadId: 'busy', message: 'Again', model });
      assert.equal(second.status, 409);
      const error = ((await second.json()) as { error: string }).error;
      assert.match(error, new RegExp(`stream ${active!.stream_id}`));
      assert.match(error, /rejoin it with GET/);
      held.open();
      await first.text();
      assert.equal((await getThread(app, 'busy')).messages.length, 2, 'the refused message was not appended');
    });

    it('cancels with DELETE …/stream: the vendor call is aborted, the stream ends with abort, the partial reply is saved as cancelled', async () => {
      await saveThread(authed(app), app.workspaceId, 'cancel');
      vendor.reply({ type: 'hang', partial: TEXT });
      const response = await post(app, { threadId: 'cancel', message: 'Hello', model });
      const reader = response.body!.getReader();
      let text = await readUntil(reader, '"text-delta"');
      const vendorRequest = vendor.requests.at(-1)!;
      const cancelled = await authed(app).request(`/workspace/${app.workspaceId}/threads/cancel/stream`, { method: 'DELETE' });
      assert.equal(cancelled.status, 200);
      assert.match(((await cancelled.json()) as { message: string }).message, /cancelled; the partial reply is saved/);
      await vendorRequest.closed;
      text += await readAll(reader);
      const chunks = await readChunks(new Response(text).body!);
      assert.ok(chunks.some((chunk) => chunk.type === 'abort'));
      assert.match(text, /data: \[DONE\]\n\n$/);
      const saved = (await getThread(app, 'cancel')).messages[1];
      assert.equal(saved.metadata.status, 'cancelled');
      assert.ok(textOf(saved).length > 0 && TEXT.join('').startsWith(textOf(saved)), 'the partial text is kept');
      const again = await authed(app).request(`/workspace/${app.workspaceId}/threads/cancel/stream`, { method: 'DELETE' });
      assert.match(((await again.json()) as { message: string }).message, /no reply is streaming/);
    });

    it('turns a vendor error into an error chunk with a useful message and no secret, then ends the stream', async () => {
      await saveThread(authed(app), app.workspaceId, 'failing');
      vendor.reply({ type: 'error', status: 400, message: 'This model does not exist' });
      const response = await post(app, { threadId: 'failing', message: 'Hello', model });
      assert.equal(response.status, 200);
      const text = await response.text();
      const chunks = await readChunks(new Response(text).body!);
      const error = chunks.find((chunk): chunk is Extract<UIMessageChunk, { type: 'error' }> => chunk.type === 'error');
      assert.match(error!.errorText, /This model does not exist/);
      assert.equal(text.includes(vendor.credentials.api_key!), false);
      assert.match(text, /data: \[DONE\]\n\n$/);
      assert.equal((await getThread(app, 'failing')).messages[1].metadata.status, 'error');
    });

    describe('bad input', () => {
      const cases: [string, () => unknown, number, RegExp][] = [
        ['an unknown thread', () => ({ threadId: 'nope', message: 'Hi', model }), 404, /thread nope not found/],
        ['empty text', () => ({ threadId: 'bad', message: '', model }), 400, /message is empty/],
        ['blank text', () => ({ threadId: 'bad', message: '   ', model }), 400, /message is empty/],
        ['a UI message without text', () => ({ threadId: 'bad', message: { role: 'user', parts: [] }, model }), 400, /message is empty/],
        ['an assistant message', () => ({ threadId: 'bad', message: { role: 'assistant', parts: [{ type: 'text', text: 'x' }] }, model }), 400, /message/],
        ['a malformed part', () => ({ threadId: 'bad', message: { role: 'user', parts: [{ type: 'text' }] }, model }), 400, /message/],
        ['an unknown provider', () => ({ threadId: 'bad', message: 'Hi', model: { provider: 'acme', model: 'x' } }), 400, /model\.provider/],
        ['a provider the account has not configured', () => ({ threadId: 'bad', message: 'Hi', model: { provider: 'google', model: 'gemini-2.5-flash' } }), 400, /PUT \/v1\/llm-provider\/google/],
        ['no model anywhere', () => ({ threadId: 'bad', message: 'Hi' }), 400, /models\.default in the workspace config/],
        ['a thread id with a slash', () => ({ threadId: 'a/b', message: 'Hi', model }), 400, /threadId/],
      ];
      before(async () => saveThread(authed(app), app.workspaceId, 'bad'));
      for (const [name, body, status, message] of cases) {
        it(`${name} → ${status}`, async () => {
          const answer = await post(app, body());
          const text = await answer.text();
          assert.equal(answer.status, status, text);
          assert.match(text, message);
        });
      }
      it('a thread file that is not valid JSON → 409 naming the file', async () => {
        await saveThread(authed(app), app.workspaceId, 'broken');
        const root = (await app.server.runloom.workspaces.files(ACCOUNT, app.workspaceId)).localRoot!;
        const fs = await import('node:fs');
        fs.writeFileSync(path.join(root, '.runloom/threads/broken.json'), '{');
        const answer = await post(app, { threadId: 'broken', message: 'Hi', model });
        assert.equal(answer.status, 409);
        assert.match(await answer.text(), /broken\.json is not valid JSON/);
      });
      it('the model comes from the workspace config’s models.default when the request names none', async () => {
        const configured = await authed(app).request(`/workspace/${app.workspaceId}/config`, json('PATCH', { models: { default: model } }));
        assert.equal(configured.status, 200, await configured.text());
        vendor.reply({ type: 'text', chunks: ['configured'] });
        const answer = await post(app, { threadId: 'bad', message: 'Hi' });
        assert.equal(textOf(await assemble(await readChunks(answer.body!))), 'configured');
      });
    });
  });

  describe('time and restarts', () => {
    let vendor: FakeVendorServer;
    let t: TestRunloom | undefined;
    before(async () => {
      vendor = await startFakeVendor('openai');
    });
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });
    after(async () => vendor?.close());

    it('ends a stream that hears nothing from the vendor for threadStreamIdleTimeoutMs (on the Clock) with an error chunk, keeping the partial reply', async () => {
      const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
      t = await startTestRunloom({ rateLimit: 0, allowPrivateNetwork: true, clock, threadStreamIdleTimeoutMs: 5_000 });
      const workspaceId = await workspaceWithVendor(t, vendor);
      await saveThread(t, workspaceId, 'idle');
      vendor.reply({ type: 'hang', partial: TEXT });
      const response = await t.request(`/workspace/${workspaceId}/threads/stream`, json('POST', { threadId: 'idle', message: 'Hi', model: { provider: 'openai', model: vendor.model } }));
      const reader = response.body!.getReader();
      let text = await readUntil(reader, '"text-delta"');
      await clock.advance(4_999);
      assert.equal((await t.runloom.threadStreams.debug(ACCOUNT, workspaceId)).length, 1, 'still streaming before the bound');
      await clock.advance(1);
      text += await readAll(reader);
      const chunks = await readChunks(new Response(text).body!);
      const error = chunks.find((chunk): chunk is Extract<UIMessageChunk, { type: 'error' }> => chunk.type === 'error');
      assert.match(error!.errorText, /sent nothing for 5 s/);
      const saved = (await t.runloom.threads.get(ACCOUNT, workspaceId, 'idle')).messages[1]!;
      assert.equal((saved.metadata as { status: string }).status, 'error');
      assert.ok(textOf(saved).length > 0);
    });

    it('sends the SSE heartbeat comment every 15 s (on the Clock) while the reply waits for the vendor; the ai package still reads the stream', async () => {
      const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
      t = await startTestRunloom({ rateLimit: 0, allowPrivateNetwork: true, clock, threadStreamIdleTimeoutMs: 60_000 });
      const workspaceId = await workspaceWithVendor(t, vendor);
      await saveThread(t, workspaceId, 'beat');
      const release = gate();
      vendor.reply({ type: 'text', chunks: TEXT, gate: release.promise });
      const response = await t.request(`/workspace/${workspaceId}/threads/stream`, json('POST', { threadId: 'beat', message: 'Hi', model: { provider: 'openai', model: vendor.model } }));
      const reader = response.body!.getReader();
      let text = await readUntil(reader, '"text-delta"');
      assert.ok(!text.includes(': heartbeat'), 'no heartbeat before 15 s');
      await clock.advance(15_000);
      text += await readUntil(reader, ': heartbeat\n\n');
      release.open();
      text += await readAll(reader);
      assert.equal(textOf(await assemble(await readChunks(new Response(text).body!))), TEXT.join(''));
    });

    it('ends the reply with [DONE] while its start is still being written; a read after [DONE] waits for the start and the saved reply', async () => {
      const marking = gate();
      const slowMarkers = new ContainerModule(({ onActivation }) => {
        onActivation(ThreadStreamMarkers, (_context, markers) => {
          const record = markers.record.bind(markers);
          markers.record = async (stream) => {
            await marking.promise;
            return record(stream);
          };
          return markers;
        });
      });
      t = await startTestRunloom({ rateLimit: 0, allowPrivateNetwork: true, modules: [slowMarkers] });
      const workspaceId = await workspaceWithVendor(t, vendor);
      await saveThread(t, workspaceId, 'slow-start');
      vendor.reply({ type: 'text', chunks: TEXT });
      const response = await t.request(`/workspace/${workspaceId}/threads/stream`, json('POST', { threadId: 'slow-start', message: 'Hi', model: { provider: 'openai', model: vendor.model } }));
      const text = await readAll(response.body!.getReader());
      assert.match(text, /"type":"finish"[\s\S]*data: \[DONE\]\n\n$/);
      const read = t.runloom.threads.get(ACCOUNT, workspaceId, 'slow-start');
      marking.open();
      const [user, reply] = (await read).messages;
      assert.equal(textOf(user), 'Hi');
      assert.equal((reply!.metadata as { status: string }).status, 'complete');
      assert.equal(textOf(reply), TEXT.join(''));
    });

    it('marks a reply cut off by a shutdown as interrupted, with what had streamed', async () => {
      t = await startTestRunloom({ rateLimit: 0, allowPrivateNetwork: true });
      const workspaceId = await workspaceWithVendor(t, vendor);
      await saveThread(t, workspaceId, 'shutdown');
      vendor.reply({ type: 'hang', partial: TEXT });
      const response = await t.request(`/workspace/${workspaceId}/threads/stream`, json('POST', { threadId: 'shutdown', message: 'Hi', model: { provider: 'openai', model: vendor.model } }));
      const reader = response.body!.getReader();
      await readUntil(reader, '"text-delta"');
      await t.restart();
      const text = await readAll(reader);
      assert.match(text, /the server stopped while the reply was streaming/);
      const saved = (await t.runloom.threads.get(ACCOUNT, workspaceId, 'shutdown')).messages[1]!;
      assert.equal((saved.metadata as { status: string }).status, 'interrupted');
      assert.ok(textOf(saved).length > 0);
    });

    it('after kill -9 mid-reply, the next start marks the reply interrupted with its last checkpoint', async () => {
      t = await startTestRunloom({ rateLimit: 0, allowPrivateNetwork: true });
      const { dataDir } = t;
      const workspaceId = await workspaceWithVendor(t, vendor);
      await saveThread(t, workspaceId, 'killed');
      await t.runloom.close();
      vendor.reply({ type: 'hang', partial: TEXT });
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir, ACCOUNT, workspaceId, 'killed', vendor.model], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('checkpointed') && resolve());
        child.on('exit', (code) => reject(new Error(`the child exited with ${code}: ${stderr}`)));
      });
      child.kill('SIGKILL');
      await exited;
      await t.restart();
      const saved = (await t.runloom.threads.get(ACCOUNT, workspaceId, 'killed')).messages[1]!;
      assert.equal((saved.metadata as { status: string }).status, 'interrupted');
      assert.ok(textOf(saved).length > 0, 'the checkpointed text is kept');
      assert.deepEqual(await t.runloom.threadStreams.debug(ACCOUNT, workspaceId), []);
    });
  });
});

const CHILD = path.join(__dirname, 'fixtures', 'thread-stream-child.ts');

function authed(app: { server: TestServer; token: string }): TestRunloom {
  return {
    request: (requestPath: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${app.token}`);
      return fetch(`${app.server.url}${requestPath}`, { ...init, headers });
    },
  } as unknown as TestRunloom;
}

function post(app: { server: TestServer; token: string; workspaceId: string }, body: unknown, signal?: AbortSignal): Promise<Response> {
  return authed(app).request(`/workspace/${app.workspaceId}/threads/stream`, { ...json('POST', body), signal });
}

async function getThread(app: { server: TestServer; token: string; workspaceId: string }, threadId: string): Promise<any> {
  const response = await authed(app).request(`/workspace/${app.workspaceId}/thread/${threadId}`);
  assert.equal(response.status, 200);
  return ((await response.json()) as { data: unknown }).data;
}

async function debug(app: { server: TestServer; token: string; workspaceId: string }): Promise<{ stream_id: string; subscribers: number }[]> {
  const response = await authed(app).request(`/workspace/${app.workspaceId}/streams/debug`);
  assert.equal(response.status, 200);
  return ((await response.json()) as { data: { stream_id: string; subscribers: number }[] }).data;
}

/** A transport set up as a `useChat` front end would set it up for this API (docs/api.md#thread-streams). */
function chatTransport(app: { server: TestServer; token: string; workspaceId: string }, provider: string, model: string): DefaultChatTransport<UIMessage> {
  const api = `${app.server.url}/workspace/${app.workspaceId}/threads/stream`;
  return new DefaultChatTransport({
    api,
    headers: { authorization: `Bearer ${app.token}` },
    prepareSendMessagesRequest: ({ id, messages }) => ({ body: { threadId: id, message: messages.at(-1), model: { provider, model } } }),
    prepareReconnectToStreamRequest: ({ id }) => ({ api: `${api}?threadId=${encodeURIComponent(id)}` }),
  });
}

async function collect(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(value);
  }
}
