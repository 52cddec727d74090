import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ORPHAN_SWEEP_MS } from '../packages/core/src/domain/threads/thread-streams';
import type { CreateRunloomOptions } from '../packages/core/src/index';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../packages/core/test-support/postgres-test-store';
import { startTestServer, type TestServer } from './support/server';
import { assemble, frameIds, gate, readAll, readChunks, readUntil, textOf } from './support/threads';
import { startCrashChild } from './support/crash-child';
import { waitUntil } from './support/wait';

/**
 * Live streams across instances (ARCHITECTURE.md, "Beyond one machine"): two Runlooms on one
 * PostgreSQL schema, one workspaces folder and one secret key, each behind its own loopback server.
 * A reply or a command execution runs on one; the other rejoins it, follows it and cancels it.
 */

const ACCOUNT = 'acct-cross';
const CHILD = path.join(__dirname, 'fixtures', 'thread-stream-child.ts');
const TEXT = ['Streams ', 'cross ', 'from ', 'one ', 'instance ', 'to ', 'another.'];

describe('live streams across instances on one PostgreSQL database', function () {
  this.timeout(60_000);
  let schema: TestSchema;
  let root: string;
  let vendor: FakeVendorServer;
  let a: TestServer;
  let b: TestServer;
  let token: string;
  let workspaceId: string;
  let model: { provider: string; model: string };
  let shared: CreateRunloomOptions & { databaseUrl: string; workspacesDir: string; secretKey: string };

  const call = (server: TestServer, route: string, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${token}`);
    if (typeof init.body === 'string') headers.set('content-type', 'application/json');
    return fetch(`${server.url}${route}`, { ...init, headers });
  };
  const startReply = (threadId: string): Promise<Response> =>
    call(a, `/workspace/${workspaceId}/threads/stream`, { method: 'POST', body: JSON.stringify({ threadId, message: 'Hello', model }) });
  const rejoin = (server: TestServer, threadId: string, lastEventId?: string): Promise<Response> =>
    call(server, `/workspace/${workspaceId}/threads/stream?threadId=${threadId}`, lastEventId ? { headers: { 'last-event-id': lastEventId } } : {});
  const workspaceEvents = (server: TestServer) => openWorkspaceEvents(`${server.url}/workspace/${workspaceId}/events`, token);
  const saveThread = async (threadId: string, server = a): Promise<void> => {
    const saved = await call(server, `/workspace/${workspaceId}/thread/${threadId}/save`, { method: 'POST', body: '{}' });
    assert.equal(saved.status, 201, await saved.text());
  };
  /** Saves `threadId` and starts on A a reply the vendor holds halfway until `held.open()`; answers the reader and the text up to its first delta. */
  const startHeldReply = async (threadId: string) => {
    await saveThread(threadId);
    const held = gate();
    vendor.reply({ type: 'text', chunks: TEXT, gate: held.promise });
    const reader = (await startReply(threadId)).body!.getReader();
    return { held, reader, text: await readUntil(reader, '"text-delta"') };
  };
  const savedReply = async (server: TestServer, threadId: string): Promise<{ metadata: { status: string }; parts: { type: string; text?: string }[] }> => {
    const thread = (await (await call(server, `/workspace/${workspaceId}/thread/${threadId}`)).json()) as { data: { messages: never[] } };
    return thread.data.messages[1]!;
  };

  before(async () => {
    schema = createTestSchema();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-cross-'));
    vendor = await startFakeVendor('openai');
    model = { provider: 'openai', model: vendor.model };
    shared = {
      databaseUrl: `${TEST_DATABASE_URL}?schema=${schema.schema}`,
      workspacesDir: path.join(root, 'workspaces'),
      secretKey: randomBytes(32).toString('base64'),
      allowPrivateNetwork: true,
      shellCommands: true,
      rateLimit: 0,
    };
    a = await startTestServer(shared);
    b = await startTestServer(shared);
    const { client_id, client_secret } = await a.runloom.auth.createClient(ACCOUNT);
    token = (await a.runloom.auth.issueToken({ grant_type: 'client_credentials', client_id, client_secret })).access_token;
    const created = await call(a, '/workspaces', { method: 'POST', body: JSON.stringify({ name: 'across instances' }) });
    workspaceId = ((await created.json()) as { data: { id: string } }).data.id;
    const provider = await call(a, `/v1/llm-provider/${vendor.provider}`, { method: 'PUT', body: JSON.stringify({ enabled: true, credentials: vendor.credentials }) });
    assert.ok(provider.ok, await provider.text());
  });

  after(async () => {
    await b?.close();
    await a?.close();
    await vendor?.close();
    await schema?.drop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('shows a workspace event stream on either instance every event caused on both, in order, under the same ids', async () => {
    const onA = await workspaceEvents(a);
    const onB = await workspaceEvents(b);
    for (const [server, threadId] of [[a, 'e1'], [b, 'e2'], [a, 'e3']] as const) await saveThread(threadId, server);
    const [seenOnA, seenOnB] = await Promise.all([onA.until('e3'), onB.until('e3')]);
    assert.deepEqual(seenOnB, seenOnA);
    assert.deepEqual(
      seenOnA.filter((frame) => /"thread_?[iI]d":"e\d"/.test(frame.data)).map((frame) => /"(e\d)"/.exec(frame.data)![1]),
      ['e1', 'e2', 'e3'],
    );
    const ids = seenOnA.map((frame) => frame.id);
    assert.deepEqual(ids, [...ids].sort((x, y) => x - y), 'ids increase');
  });

  it('rejoins from B a reply streaming on A: every chunk under the same ids, from the start and after Last-Event-ID', async () => {
    await saveThread('rejoined');
    const held = gate();
    vendor.reply({ type: 'text', chunks: TEXT, gate: held.promise });
    const started = await startReply('rejoined');
    // At once: on a shared database the reply is findable from the moment A answers.
    const fromStart = await rejoin(b, 'rejoined');
    assert.equal(fromStart.status, 200);
    const reader = started.body!.getReader();
    let original = await readUntil(reader, '"text-delta"');
    assert.equal(fromStart.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
    const fromThree = await rejoin(b, 'rejoined', '3');
    assert.equal(fromThree.status, 200);
    held.open();
    original += await readAll(reader);
    const [replayed, later] = await Promise.all([fromStart.text(), fromThree.text()]);
    assert.equal(replayed, original, 'B answers the frames A answered, ids included');
    assert.equal(later, original.slice(original.indexOf('id: 4\n')));
    assert.equal(frameIds(later)[0], 4);
    assert.equal(textOf(await assemble(await readChunks(new Response(replayed).body!))), TEXT.join(''));
    assert.equal((await savedReply(b, 'rejoined')).metadata.status, 'complete');
    assert.equal((await rejoin(b, 'rejoined')).status, 204, 'nothing streams once the reply is saved');
  });

  it('cancels from B a reply streaming on A: the vendor call stops, A’s subscribers see the abort, the partial reply is saved as cancelled', async () => {
    const { held, reader, text: upToFirstDelta } = await startHeldReply('cancelled');
    let text = upToFirstDelta;
    const vendorRequest = vendor.requests.at(-1)!;
    const cancelled = await call(b, `/workspace/${workspaceId}/threads/cancelled/stream`, { method: 'DELETE' });
    assert.equal(cancelled.status, 200);
    assert.match(((await cancelled.json()) as { message: string }).message, /cancelled; the partial reply is saved/);
    await vendorRequest.closed;
    text += await readAll(reader);
    const chunks = await readChunks(new Response(text).body!);
    assert.ok(chunks.some((chunk) => chunk.type === 'abort'), 'A’s stream ends with an abort');
    const saved = await savedReply(b, 'cancelled');
    assert.equal(saved.metadata.status, 'cancelled', 'B reads the saved reply once its cancel is answered');
    held.open();
  });

  it('follows from the other instance a command execution running on one: its output from the first byte as it comes; a cancel from there kills its process', async () => {
    const created = await call(a, `/workspace/${workspaceId}/commands`, {
      method: 'POST',
      body: JSON.stringify({ trigger: 'slow', type: 'shell', argv: ['sh', '-c', 'echo started; echo "pid $$"; exec sleep 30'] }),
    });
    assert.equal(created.status, 201, await created.text());
    const accepted = await call(a, `/workspace/${workspaceId}/command/slow/execute`, { method: 'POST', body: '{}' });
    const { runId } = ((await accepted.json()) as { data: { runId: string } }).data;
    const execution = `/workspace/${workspaceId}/command/slow/executions/${runId}`;
    // Either instance's queue may run it: the one whose record view holds the output so far runs it.
    const outputOn = async (server: TestServer): Promise<string> => ((await (await call(server, execution)).json()) as { data: { output: string } }).data.output;
    let runner: TestServer | undefined;
    await waitUntil(async () => {
      for (const server of [a, b]) if ((await outputOn(server)).includes('pid ')) runner = server;
      return runner !== undefined;
    }, 'the execution to start');
    const other = runner === a ? b : a;
    assert.equal(await outputOn(other), '', 'the other instance does not run it');

    const followed = await call(other, `${execution}/output`);
    assert.equal(followed.status, 200);
    const reader = followed.body!.getReader();
    let firstBytes = await readUntil(reader, 'pid ');
    while (!/pid \d+\n/.test(firstBytes)) firstBytes += await readUntil(reader, '\n');
    assert.match(firstBytes, /^started\npid \d+\n$/, 'the output from its first byte');
    const pid = Number(/pid (\d+)/.exec(firstBytes)![1]);
    assert.doesNotThrow(() => process.kill(pid, 0), 'the command runs');

    const cancelled = await call(other, execution, { method: 'DELETE' });
    assert.equal(cancelled.status, 200);
    const view = ((await cancelled.json()) as { data: { status: string; output: string } }).data;
    assert.equal(view.status, 'cancelled');
    assert.match(view.output, /^started\npid \d+\n$/, 'the output the running instance had, kept');
    assert.throws(() => process.kill(pid, 0), /ESRCH/, 'the process is gone once the cancel is answered');
    await readAll(reader);
  });

  it('refuses on B a second reply on a thread streaming on A (409 naming the stream), and a starting instance leaves A’s reply alone', async () => {
    const { held, reader, text: upToFirstDelta } = await startHeldReply('busy');
    let text = upToFirstDelta;
    const second = await call(b, `/workspace/${workspaceId}/threads/stream`, { method: 'POST', body: JSON.stringify({ threadId: 'busy', message: 'Again', model }) });
    assert.equal(second.status, 409);
    assert.match(((await second.json()) as { error: string }).error, /is streaming a reply \(stream [0-9a-f-]{36}/);
    // A third instance starting now finds A's reply live: it neither marks it interrupted nor hides it from B.
    const third = await startTestServer(shared);
    try {
      assert.equal((await savedReply(b, 'busy')).metadata.status, 'streaming');
      const rejoined = await rejoin(b, 'busy');
      assert.equal(rejoined.status, 200);
      held.open();
      vendor.reply({ type: 'text', chunks: ['Next.'] });
      text += await readAll(reader);
      // Right after [DONE] (A may still be saving, its marker still there) the next message goes to B.
      const next = await call(b, `/workspace/${workspaceId}/threads/stream`, { method: 'POST', body: JSON.stringify({ threadId: 'busy', message: 'Next', model }) });
      assert.equal(next.status, 200, `the reply on A has ended: ${next.status} ${next.status === 200 ? '' : await next.clone().text()}`);
      assert.match(await next.text(), /Next\./);
      assert.equal(await rejoined.text(), text);
    } finally {
      await third.close();
    }
    assert.equal((await savedReply(b, 'busy')).metadata.status, 'complete');
  });

  it('marks interrupted, on the instances left, a reply whose instance was killed mid-stream (kill -9)', async () => {
    await saveThread('orphaned');
    const held = gate();
    vendor.reply({ type: 'text', chunks: TEXT, gate: held.promise });
    const childDataDir = fs.mkdtempSync(path.join(root, 'child-'));
    const child = await startCrashChild(CHILD, [childDataDir, ACCOUNT, workspaceId, 'orphaned', vendor.model, shared.workspacesDir, shared.secretKey], shared.databaseUrl);
    assert.equal(child.line, 'checkpointed');
    assert.equal((await savedReply(b, 'orphaned')).metadata.status, 'streaming');
    await child.kill();
    // Found by the next sweep of either instance (every ORPHAN_SWEEP_MS), well within DESIGN's 10 s of failover.
    await waitUntil(async () => (await savedReply(b, 'orphaned')).metadata.status === 'interrupted', 'the reply to be marked interrupted', 2 * ORPHAN_SWEEP_MS);
    const saved = await savedReply(a, 'orphaned');
    assert.ok(textOf(saved).length > 0, 'the checkpointed text is kept');
    assert.equal((await rejoin(b, 'orphaned')).status, 204);
    held.open();
  });

  it('answers 204 on B for a thread with no reply streaming anywhere, and DELETE says nothing was streaming', async () => {
    await saveThread('quiet');
    assert.equal((await rejoin(b, 'quiet')).status, 204);
    const deleted = await call(b, `/workspace/${workspaceId}/threads/quiet/stream`, { method: 'DELETE' });
    assert.equal(deleted.status, 200);
    assert.match(((await deleted.json()) as { message: string }).message, /no reply is streaming/);
  });
});

const decoder = new TextDecoder();

interface Frame {
  id: number;
  data: string;
}

/** `GET …/events` on `server`: `until(text)` answers the frames received up to the first whose data holds `text`, and closes the stream. */
async function openWorkspaceEvents(url: string, token: string): Promise<{ until(text: string): Promise<Frame[]> }> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  return {
    async until(text) {
      const frames: Frame[] = [];
      let buffer = '';
      while (!frames.some((frame) => frame.data.includes(text))) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`the event stream ended before ${text}`);
        buffer += decoder.decode(value, { stream: true });
        const blocks = buffer.split('\n\n');
        buffer = blocks.pop()!;
        for (const block of blocks) {
          const id = /^id: (\d+)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (id !== undefined && data !== undefined) frames.push({ id: Number(id), data });
        }
      }
      controller.abort();
      return frames;
    },
  };
}
