import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Database, type PublishedWorkspaceEvent } from '../packages/core/src/index';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { createWorkspace, json, saveThread } from './support/threads';

/** docs/api.md#threads: threads as files under .runloom/threads with a metadata index. */

const ACCOUNT = 'acct-a';

const userMessage = (id: string, text: string) => ({ id, role: 'user', parts: [{ type: 'text', text }] });

describe('threads', function () {
  this.timeout(60_000);
  let t: TestRunloom;
  let workspaceId: string;
  let root: string;

  before(async () => {
    t = await startTestRunloom({ rateLimit: 0 });
  });
  after(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    workspaceId = await createWorkspace(t);
    root = (await t.runloom.workspaces.files(ACCOUNT, workspaceId)).localRoot!;
  });

  const threadFile = (threadId: string) => path.join(root, '.runloom', 'threads', `${threadId}.json`);
  const getThread = async (threadId: string) => t.request(`/workspace/${workspaceId}/thread/${threadId}`);
  const list = async () => {
    const response = await t.request(`/workspace/${workspaceId}/threads`);
    assert.equal(response.status, 200);
    return ((await response.json()) as { data: Record<string, any>[] }).data;
  };
  /** Resolves with the workspace events of `types` once `count` have been published. */
  const nextEvents = (types: string[], count: number): Promise<PublishedWorkspaceEvent[]> =>
    new Promise((resolve) => {
      const seen: PublishedWorkspaceEvent[] = [];
      const subscription = t.runloom.workspaceEvents.subscribe(workspaceId, (event) => {
        if (!types.includes(event.event.type)) return;
        seen.push(event);
        if (seen.length === count) {
          subscription.unsubscribe();
          resolve(seen);
        }
      });
    });

  it('saves a thread as a file (201, then 200 overwriting), reads it, lists its metadata and publishes thread.updated', async () => {
    const events = nextEvents(['thread.updated'], 2);
    const created = await t.request(`/workspace/${workspaceId}/thread/chat-1/save`, json('POST', { title: 'First', messages: [userMessage('m1', 'Hello')] }));
    assert.equal(created.status, 201);
    const body = (await created.json()) as { message: string; data: Record<string, any> };
    assert.match(body.message, /created/);
    assert.deepEqual(body.data.messages, [userMessage('m1', 'Hello')]);
    const onDisk = JSON.parse(fs.readFileSync(threadFile('chat-1'), 'utf8'));
    assert.deepEqual(onDisk, body.data, 'the file holds the thread as answered');

    const overwritten = await t.request(`/workspace/${workspaceId}/thread/chat-1/save`, json('POST', { title: 'Second' }));
    assert.equal(overwritten.status, 200);
    const thread = ((await (await getThread('chat-1')).json()) as { data: Record<string, any> }).data;
    assert.equal(thread.title, 'Second');
    assert.deepEqual(thread.messages, []);
    assert.equal(thread.created_at, body.data.created_at, 'overwriting keeps the creation time');

    const [row] = await list();
    assert.deepEqual(row, {
      id: 'chat-1',
      workspace_id: workspaceId,
      title: 'Second',
      message_count: 0,
      created_at: thread.created_at,
      updated_at: thread.updated_at,
      problem: null,
    });
    const published = await events;
    assert.deepEqual(
      published.map((event) => [event.event.threadId, event.event.title]),
      [
        ['chat-1', 'First'],
        ['chat-1', 'Second'],
      ],
    );
  });

  it('PATCH merges messages by id and replaces summary and metadata; PATCH …/metadata never touches messages', async () => {
    await saveThread(t, workspaceId, 'chat-2', { messages: [userMessage('m1', 'one'), userMessage('m2', 'two')] });
    const patched = await t.request(
      `/workspace/${workspaceId}/thread/chat-2`,
      json('PATCH', { messages: [userMessage('m2', 'two, edited'), userMessage('m3', 'three')], summary: 'counting', metadata: { pinned: true } }),
    );
    assert.equal(patched.status, 200);
    const data = ((await patched.json()) as { data: Record<string, any> }).data;
    assert.deepEqual(
      data.messages.map((message: any) => [message.id, message.parts[0].text]),
      [
        ['m1', 'one'],
        ['m2', 'two, edited'],
        ['m3', 'three'],
      ],
    );
    assert.equal(data.summary, 'counting');
    assert.deepEqual(data.metadata, { pinned: true });

    const metadataOnly = await t.request(
      `/workspace/${workspaceId}/thread/chat-2/metadata`,
      json('PATCH', { title: 'Numbers', metadata: { pinned: false }, messages: [], summary: 'ignored' }),
    );
    assert.equal(metadataOnly.status, 200);
    const after = ((await metadataOnly.json()) as { data: Record<string, any> }).data;
    assert.equal(after.title, 'Numbers');
    assert.deepEqual(after.metadata, { pinned: false });
    assert.equal(after.messages.length, 3, 'messages stay');
    assert.equal(after.summary, 'counting', 'summary stays');
  });

  it('keeps every message of 30 parallel PATCHes of one thread', async () => {
    await saveThread(t, workspaceId, 'busy');
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, index) => t.request(`/workspace/${workspaceId}/thread/busy`, json('PATCH', { messages: [userMessage(`p${index}`, `message ${index}`)] }))),
    );
    assert.deepEqual(
      answers.map((answer) => answer.status),
      answers.map(() => 200),
    );
    const thread = ((await (await getThread('busy')).json()) as { data: Record<string, any> }).data;
    assert.deepEqual(new Set(thread.messages.map((message: any) => message.id)), new Set(Array.from({ length: 30 }, (_, index) => `p${index}`)));
    assert.equal((await list()).find((row) => row.id === 'busy')!.message_count, 30);
  });

  it('deletes a thread: its file and row go, thread.deleted is published, then 404', async () => {
    await saveThread(t, workspaceId, 'gone');
    const deleted = nextEvents(['thread.deleted'], 1);
    const answer = await t.request(`/workspace/${workspaceId}/thread/gone`, { method: 'DELETE' });
    assert.equal(answer.status, 200);
    assert.deepEqual(await answer.json(), { message: 'thread gone deleted' });
    assert.equal((await deleted)[0]!.event.threadId, 'gone');
    assert.equal(fs.existsSync(threadFile('gone')), false);
    assert.deepEqual(await list(), []);
    assert.equal((await getThread('gone')).status, 404);
    assert.equal((await t.request(`/workspace/${workspaceId}/thread/gone`, { method: 'DELETE' })).status, 404);
  });

  it('rebuilds the index from the files after it was deleted, corrupted, and a file was edited behind its back', async () => {
    await saveThread(t, workspaceId, 'a', { title: 'A', messages: [userMessage('m1', 'x')] });
    await saveThread(t, workspaceId, 'b', { title: 'B' });
    const database = t.runloom.container.get<Database>(Database);
    // Deleted: the listing is empty until the rebuild.
    await database.write([
      { op: 'delete', collection: 'thread_index', id: `${workspaceId}/a` },
      { op: 'delete', collection: 'thread_index', id: `${workspaceId}/b` },
    ]);
    assert.deepEqual(await list(), []);
    const rebuilt = await t.request(`/workspace/${workspaceId}/threads/rebuild-metadata`, { method: 'POST' });
    assert.equal(rebuilt.status, 200);
    assert.deepEqual(((await rebuilt.json()) as { data: unknown }).data, { threads: 2, problems: 0 });
    assert.deepEqual((await list()).map((row) => [row.id, row.title, row.message_count]).sort(), [
      ['a', 'A', 1],
      ['b', 'B', 0],
    ]);

    // Corrupted: a wrong row, and a row of a thread that has no file.
    await database.write([
      { op: 'replace', collection: 'thread_index', doc: { id: `${workspaceId}/a`, account_id: ACCOUNT, workspace_id: workspaceId, thread_id: 'a', title: 'wrong', message_count: 99, updated_at: 'x' } },
      { op: 'insert', collection: 'thread_index', doc: { id: `${workspaceId}/ghost`, account_id: ACCOUNT, workspace_id: workspaceId, thread_id: 'ghost', title: 'ghost', message_count: 1, updated_at: 'y' } },
    ]);
    // Edited behind the service's back, and a new file dropped in (as a git pull would).
    const edited = JSON.parse(fs.readFileSync(threadFile('b'), 'utf8'));
    fs.writeFileSync(threadFile('b'), JSON.stringify({ ...edited, title: 'B, edited', messages: [userMessage('m9', 'added by hand')] }));
    fs.writeFileSync(threadFile('c'), JSON.stringify({ ...edited, id: 'c', title: 'C' }));

    await t.request(`/workspace/${workspaceId}/threads/rebuild-metadata`, { method: 'POST' });
    assert.deepEqual((await list()).map((row) => [row.id, row.title, row.message_count, row.problem]).sort(), [
      ['a', 'A', 1, null],
      ['b', 'B, edited', 1, null],
      ['c', 'C', 0, null],
    ]);
  });

  it('lists a thread whose file is not valid JSON with its problem, and answers 409 naming it on GET and PATCH; save repairs it', async () => {
    await saveThread(t, workspaceId, 'fine', { title: 'Fine' });
    await saveThread(t, workspaceId, 'broken', { title: 'Broken' });
    fs.writeFileSync(threadFile('broken'), '{"title": "Broken", "messages": [');
    await t.request(`/workspace/${workspaceId}/threads/rebuild-metadata`, { method: 'POST' });
    const rows = await list();
    assert.equal(rows.find((row) => row.id === 'fine')!.problem, null);
    assert.match(rows.find((row) => row.id === 'broken')!.problem, /broken\.json is not valid JSON/);

    for (const answer of [await getThread('broken'), await t.request(`/workspace/${workspaceId}/thread/broken`, json('PATCH', { title: 'x' }))]) {
      assert.equal(answer.status, 409);
      assert.match(((await answer.json()) as { error: string }).error, /not valid JSON.*save/);
    }
    fs.writeFileSync(threadFile('broken'), JSON.stringify({ title: 'Wrong shape', messages: [{ id: 'm', role: 'robot', parts: [] }] }));
    const wrongShape = await getThread('broken');
    assert.equal(wrongShape.status, 409);
    assert.match(((await wrongShape.json()) as { error: string }).error, /messages\.0\.role/);

    assert.equal((await t.request(`/workspace/${workspaceId}/thread/broken/save`, json('POST', { title: 'Repaired' }))).status, 200);
    assert.equal((await getThread('broken')).status, 200);
    assert.equal((await list()).find((row) => row.id === 'broken')!.problem, null);
  });

  describe('bad input', () => {
    const cases: [string, () => Promise<Response>, number, RegExp?][] = [
      ['GET an unknown thread', () => t.request(`/workspace/${workspaceId}/thread/nope`), 404, /thread nope not found/],
      ['PATCH an unknown thread', () => t.request(`/workspace/${workspaceId}/thread/nope`, json('PATCH', { title: 'x' })), 404],
      ['PATCH …/metadata of an unknown thread', () => t.request(`/workspace/${workspaceId}/thread/nope/metadata`, json('PATCH', { title: 'x' })), 404],
      ['a thread id with a dot', () => t.request(`/workspace/${workspaceId}/thread/a.b`), 404],
      ['an unknown workspace', () => t.request(`/workspace/01900000-0000-7000-8000-000000000000/threads`), 404],
      ['another account’s workspace', () => t.request(`/workspace/${workspaceId}/threads`, { account: 'acct-other' }), 404],
      ['a message without parts', () => t.request(`/workspace/${workspaceId}/thread/x/save`, json('POST', { messages: [{ id: 'm', role: 'user' }] })), 400, /messages\.0\.parts/],
      ['a message of an unknown role', () => t.request(`/workspace/${workspaceId}/thread/x/save`, json('POST', { messages: [{ id: 'm', role: 'robot', parts: [] }] })), 400],
      ['a text part without text', () => t.request(`/workspace/${workspaceId}/thread/x/save`, json('POST', { messages: [{ id: 'm', role: 'user', parts: [{ type: 'text' }] }] })), 400],
      ['an unknown part type', () => t.request(`/workspace/${workspaceId}/thread/x/save`, json('POST', { messages: [{ id: 'm', role: 'user', parts: [{ type: 'video' }] }] })), 400],
      ['messages that are not an array', () => t.request(`/workspace/${workspaceId}/thread/x/save`, json('POST', { messages: 'hello' })), 400],
      ['metadata that is not an object', () => t.request(`/workspace/${workspaceId}/thread/x/save`, json('POST', { metadata: [1] })), 400],
    ];
    for (const [name, send, status, message] of cases) {
      it(`${name} → ${status}`, async () => {
        const answer = await send();
        const text = await answer.text();
        assert.equal(answer.status, status, text);
        if (message) assert.match(text, message);
      });
    }

    it('changes to an archived workspace → 409; reads still work', async () => {
      await saveThread(t, workspaceId, 'kept');
      assert.equal((await t.request(`/workspace/${workspaceId}/lifecycle-events`, json('POST', { event: 'archived' }))).status, 201);
      assert.equal((await t.request(`/workspace/${workspaceId}/thread/kept/save`, json('POST', {}))).status, 409);
      assert.equal((await t.request(`/workspace/${workspaceId}/thread/kept`, json('PATCH', { title: 'x' }))).status, 409);
      assert.equal((await t.request(`/workspace/${workspaceId}/thread/kept`, { method: 'DELETE' })).status, 409);
      assert.equal((await getThread('kept')).status, 200);
    });
  });

  it('adds the thread count and the latest thread change to the workspace metadata summary', async () => {
    await saveThread(t, workspaceId, 'one');
    await saveThread(t, workspaceId, 'two');
    const latest = ((await (await getThread('two')).json()) as { data: { updated_at: string } }).data.updated_at;
    const summary = await t.request(`/workspace/${workspaceId}/metadata`);
    assert.equal(summary.status, 200);
    const { data } = (await summary.json()) as { data: { thread_count: number; last_activity_at: string } };
    assert.equal(data.thread_count, 2);
    assert.ok(data.last_activity_at >= latest);
  });

  it('works through the facade as through HTTP', async () => {
    const { created, thread } = await t.runloom.threads.save(ACCOUNT, workspaceId, 'facade', { title: 'Facade' });
    assert.equal(created, true);
    assert.deepEqual(await t.runloom.threads.get(ACCOUNT, workspaceId, 'facade'), thread);
    assert.equal((await t.runloom.threads.list(ACCOUNT, workspaceId, { limit: 10, offset: 0 }))[0]!.title, 'Facade');
  });
});
