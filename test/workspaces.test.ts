import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ContainerModule } from 'inversify';
import type { PublishedWorkspaceEvent } from '../packages/core/src/index';
import { WorkspaceMetadataContributor, type WorkspaceMetadataContribution } from '../packages/core/src/domain/workspaces/workspace-metadata';
import { ManualClock } from '../packages/core/src/testing/manual-clock';
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../packages/core/test-support/postgres-test-store';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { jsonCalls } from './support/json-calls';

interface Workspace {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  template_id: string | null;
  status: 'active' | 'archived';
  metadata: Record<string, unknown>;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

interface LifecycleEvent {
  id: string;
  event: string;
  notes: string | null;
  created_by: string;
  created_at: string;
}

/** What the test contributor adds to every summary (docs/api.md#workspaces, the metadata summary). */
const contributions: WorkspaceMetadataContribution[] = [
  { thread_count: 2, process_runs: { running: 1, succeeded: 3 }, last_activity_at: '2001-01-01T00:00:00.000Z' },
  { command_count: 5, process_runs: { running: 2 } },
];
const contributorsModule = new ContainerModule(({ bind }) => {
  for (const contribution of contributions) bind(WorkspaceMetadataContributor).toConstantValue({ contribute: async () => contribution });
});

function describeWorkspaces(store: 'embedded store' | 'PostgreSQL'): void {
  describe(`workspaces (${store})`, function () {
    this.timeout(60_000);
    let app: TestRunloom;
    let schema: TestSchema | undefined;
    // Time moves only when a test says so: a change lands at a later time than the create.
    const clock = new ManualClock(new Date('2030-01-01T00:00:00.000Z'));

    before(async () => {
      if (store === 'PostgreSQL') schema = createTestSchema();
      app = await startTestRunloom({
        clock,
        rateLimit: 0,
        modules: [contributorsModule],
        ...(schema ? { databaseUrl: `${TEST_DATABASE_URL}?schema=${schema.schema}` } : {}),
      });
    });
    after(async () => {
      await app?.close();
      await schema?.drop();
    });

    const { send, answer } = jsonCalls(() => app);

    async function createWorkspace(body: Record<string, unknown> = { name: 'notes' }, account?: string): Promise<Workspace> {
      const created = await answer<{ message: string; data: Workspace }>(send('/workspaces', 'POST', body, account), 201);
      assert.equal(typeof created.message, 'string');
      return created.data;
    }

    async function postEvent(id: string, event: string, notes?: string): Promise<LifecycleEvent> {
      return (await answer<{ data: LifecycleEvent }>(send(`/workspace/${id}/lifecycle-events`, 'POST', { event, notes }), 201)).data;
    }

    /** Subscribes to the workspace's stream and resolves with the first event `matches` accepts. */
    function nextEvent(workspaceId: string, matches: (event: PublishedWorkspaceEvent) => boolean): Promise<PublishedWorkspaceEvent> {
      return new Promise((resolve) => {
        const subscription = app.runloom.workspaceEvents.subscribe(
          workspaceId,
          (event) => {
            if (!matches(event)) return;
            subscription.unsubscribe();
            resolve(event);
          },
          { after: 0 },
        );
      });
    }

    it('creates a workspace (201 {message, data}) with every field of the record, and reads it back as {data}', async () => {
      const created = await createWorkspace({ name: '  research  ', description: 'papers', metadata: { color: 'blue', nested: { a: [1] } } });
      assert.match(created.id, /^[0-9a-f-]{36}$/);
      assert.deepEqual(
        { ...created, id: undefined },
        {
          id: undefined,
          account_id: 'acct-a',
          name: 'research',
          description: 'papers',
          template_id: null,
          status: 'active',
          metadata: { color: 'blue', nested: { a: [1] } },
          deleted_at: null,
          created_at: clock.now().toISOString(),
          updated_at: clock.now().toISOString(),
        },
      );
      assert.deepEqual(await answer(send(`/workspace/${created.id}`, 'GET'), 200), { data: created });
    });

    it('refuses bad fields with 400 naming each one', async () => {
      for (const [body, path] of [
        [{}, 'name'],
        [{ name: '   ' }, 'name'],
        [{ name: 'x'.repeat(201) }, 'name'],
        [{ name: 'ok', metadata: [1] }, 'metadata'],
        [{ name: 'ok', template_id: 'not-a-uuid' }, 'template_id'],
      ] as const) {
        const refused = await answer<{ error: string; code: string; details: { path: string }[] }>(send('/workspaces', 'POST', body), 400);
        assert.equal(refused.code, 'VALIDATION_FAILED');
        assert.deepEqual(
          refused.details.map((detail) => detail.path),
          [path],
          JSON.stringify(body),
        );
      }
    });

    it('answers 404 for a template_id the account does not have, and makes no workspace', async () => {
      const before = await answer<{ data: Workspace[] }>(send('/workspaces?limit=500', 'GET'), 200);
      const refused = await answer<{ error: string }>(send('/workspaces', 'POST', { name: 'from nothing', template_id: randomUUID() }), 404);
      assert.match(refused.error, /workspace template .* not found/);
      const after = await answer<{ data: Workspace[] }>(send('/workspaces?limit=500', 'GET'), 200);
      assert.equal(after.data.length, before.data.length);
    });

    it('lists the account’s workspaces newest first, paged by limit and offset (default 50, at most 500)', async () => {
      const account = `acct-list-${store.length}`;
      const made: Workspace[] = [];
      for (let index = 0; index < 3; index++) {
        made.push(await createWorkspace({ name: `w${index}` }, account));
        await clock.advance(1000);
      }
      const listed = await answer<{ data: Workspace[] }>(send('/workspaces', 'GET', undefined, account), 200);
      assert.deepEqual(
        listed.data.map((workspace) => workspace.name),
        ['w2', 'w1', 'w0'],
      );
      const page = await answer<{ data: Workspace[] }>(send('/workspaces?limit=1&offset=1', 'GET', undefined, account), 200);
      assert.deepEqual(
        page.data.map((workspace) => workspace.name),
        ['w1'],
      );
      await answer(send('/workspaces?limit=501', 'GET', undefined, account), 400);
      await answer(send('/workspaces?offset=-1', 'GET', undefined, account), 400);
      const other = await answer<{ data: Workspace[] }>(send('/workspaces', 'GET', undefined, 'acct-nobody'), 200);
      assert.deepEqual(other.data, []);
    });

    it('PATCH changes name, description (null clears) and metadata (replaced whole), answering {message, data}', async () => {
      const workspace = await createWorkspace({ name: 'draft', description: 'first', metadata: { a: 1 } });
      await clock.advance(5000);
      const patched = await answer<{ message: string; data: Workspace }>(
        send(`/workspace/${workspace.id}`, 'PATCH', { name: 'final', description: null, metadata: { b: 2 } }),
        200,
      );
      assert.equal(typeof patched.message, 'string');
      assert.deepEqual(patched.data, { ...workspace, name: 'final', description: null, metadata: { b: 2 }, updated_at: clock.now().toISOString() });
      const untouched = await answer<{ data: Workspace }>(send(`/workspace/${workspace.id}`, 'PATCH', {}), 200);
      assert.equal(untouched.data.name, 'final');
      await answer(send(`/workspace/${workspace.id}`, 'PATCH', { name: '' }), 400);
    });

    it('answers 404 {error} for a missing workspace and for another account’s, on every workspace route', async () => {
      const workspace = await createWorkspace({ name: 'private' });
      for (const id of [workspace.id, randomUUID()]) {
        for (const [method, path, body] of [
          ['GET', `/workspace/${id}`],
          ['PATCH', `/workspace/${id}`, { name: 'mine now' }],
          ['GET', `/workspace/${id}/metadata`],
          ['GET', `/workspace/${id}/lifecycle-events`],
          ['POST', `/workspace/${id}/lifecycle-events`, { event: 'archived' }],
          ['GET', `/workspace/${id}/config`],
          ['PATCH', `/workspace/${id}/config`, { a: 1 }],
        ] as const) {
          const refused = await answer<{ error: string; code: string }>(send(path, method, body, 'acct-intruder'), 404);
          assert.deepEqual(refused, { error: `workspace ${id} not found`, code: 'NOT_FOUND' });
        }
      }
      const still = await answer<{ data: Workspace }>(send(`/workspace/${workspace.id}`, 'GET'), 200);
      assert.deepEqual(still.data, workspace);
    });

    it('answers each request with the record as last written, however often it was read: a PATCH, archived and unarchived apply at once', async () => {
      const workspace = await createWorkspace({ name: 'read often', metadata: { tags: ['a'] } });
      const read = async (account?: string) => (await answer<{ data: Workspace }>(send(`/workspace/${workspace.id}`, 'GET', undefined, account), 200)).data;
      const upload = async (name: string) =>
        (await app.request(`/workspace/${workspace.id}/files?path=${name}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: name })).status;
      assert.deepEqual([await read(), await read()], [workspace, workspace]);
      await clock.advance(1000);
      const renamed = (await answer<{ data: Workspace }>(send(`/workspace/${workspace.id}`, 'PATCH', { name: 'renamed' }), 200)).data;
      assert.deepEqual(await read(), renamed);
      await answer(send(`/workspace/${workspace.id}`, 'GET', undefined, 'acct-intruder'), 404);
      assert.equal(await upload('before.txt'), 201);
      assert.equal(await upload('again.txt'), 201);
      await postEvent(workspace.id, 'archived');
      assert.equal(await upload('archived.txt'), 409);
      await postEvent(workspace.id, 'unarchived');
      assert.equal(await upload('after.txt'), 201);
      // The facade's answers are the caller's to change: a later read is as stored.
      const answered = await app.runloom.workspaces.require('acct-a', workspace.id);
      answered.name = 'changed by its caller';
      (answered.metadata.tags as string[]).push('b');
      assert.deepEqual(await read(), { ...renamed, metadata: { tags: ['a'] } });
      assert.deepEqual(await app.runloom.workspaces.require('acct-a', workspace.id), await read());
    });

    describe('lifecycle events', () => {
      it('records `created` when the workspace is made, by the creating client, and publishes workspace.lifecycle', async () => {
        const workspace = await createWorkspace({ name: 'born' });
        const published = await nextEvent(workspace.id, (event) => event.event.type === 'workspace.lifecycle');
        const listed = await answer<{ data: LifecycleEvent[] }>(send(`/workspace/${workspace.id}/lifecycle-events`, 'GET'), 200);
        assert.equal(listed.data.length, 1);
        const [created] = listed.data;
        assert.deepEqual({ ...created, id: undefined, created_by: undefined }, { id: undefined, event: 'created', notes: null, created_by: undefined, created_at: workspace.created_at });
        assert.match(created!.created_by, /^rlc_/);
        assert.deepEqual(published.event, { type: 'workspace.lifecycle', event: 'created', lifecycle_event_id: created!.id, status: 'active', deleted: false });
      });

      it('archived refuses PATCH and config PATCH with 409 naming the way back; unarchived (allowed while archived) reopens it', async () => {
        const workspace = await createWorkspace({ name: 'to archive' });
        const archived = await postEvent(workspace.id, 'archived', 'done for now');
        assert.equal(archived.event, 'archived');
        assert.equal(archived.notes, 'done for now');
        assert.equal((await answer<{ data: Workspace }>(send(`/workspace/${workspace.id}`, 'GET'), 200)).data.status, 'archived');
        for (const [path, body] of [
          [`/workspace/${workspace.id}`, { name: 'changed' }],
          [`/workspace/${workspace.id}/config`, { a: 1 }],
        ] as const) {
          const refused = await answer<{ error: string; code: string }>(send(path, 'PATCH', body), 409);
          assert.equal(refused.code, 'CONFLICT');
          assert.match(refused.error, /is archived; post the lifecycle event 'unarchived'/);
        }
        await assert.rejects(app.runloom.workspaces.requireWritable('acct-a', workspace.id), /is archived/);
        // Reads and record-only events still work while archived.
        await answer(send(`/workspace/${workspace.id}/config`, 'GET'), 200);
        await postEvent(workspace.id, 'opened');
        await postEvent(workspace.id, 'unarchived');
        const reopened = await answer<{ data: Workspace }>(send(`/workspace/${workspace.id}`, 'PATCH', { name: 'changed' }), 200);
        assert.deepEqual([reopened.data.status, reopened.data.name], ['active', 'changed']);
      });

      it('deleted hides the workspace from the list and refuses changes; restored brings it back', async () => {
        const account = `acct-deleted-${store.length}`;
        const workspace = await createWorkspace({ name: 'to delete' }, account);
        const record = (event: string) => answer(send(`/workspace/${workspace.id}/lifecycle-events`, 'POST', { event }, account), 201);
        const names = async () => (await answer<{ data: Workspace[] }>(send('/workspaces', 'GET', undefined, account), 200)).data.map((listed) => listed.id);
        await clock.advance(1000);
        await record('deleted');
        assert.deepEqual(await names(), []);
        const deleted = await answer<{ data: Workspace }>(send(`/workspace/${workspace.id}`, 'GET', undefined, account), 200);
        assert.equal(deleted.data.deleted_at, clock.now().toISOString());
        const refused = await answer<{ error: string }>(send(`/workspace/${workspace.id}`, 'PATCH', { name: 'x' }, account), 409);
        assert.match(refused.error, /is deleted; post the lifecycle event 'restored'/);
        await clock.advance(1000);
        await record('deleted');
        const again = await answer<{ data: Workspace }>(send(`/workspace/${workspace.id}`, 'GET', undefined, account), 200);
        assert.equal(again.data.deleted_at, deleted.data.deleted_at, 'deleted again keeps the first time');
        await record('restored');
        assert.deepEqual(await names(), [workspace.id]);
        await answer(send(`/workspace/${workspace.id}`, 'PATCH', { name: 'back' }, account), 200);
      });

      it('refuses an unknown event with 400 listing the values, and lists events oldest first, paged', async () => {
        const workspace = await createWorkspace({ name: 'events' });
        const refused = await answer<{ error: string; details: { path: string }[] }>(send(`/workspace/${workspace.id}/lifecycle-events`, 'POST', { event: 'exploded' }), 400);
        assert.match(refused.error, /created, opened, closed, archived, unarchived, deleted, restored/);
        assert.deepEqual(
          refused.details.map((detail) => detail.path),
          ['event'],
        );
        await answer(send(`/workspace/${workspace.id}/lifecycle-events`, 'POST', {}), 400);
        for (const event of ['opened', 'closed', 'archived', 'unarchived', 'deleted', 'restored', 'created']) {
          await clock.advance(10);
          await postEvent(workspace.id, event);
        }
        const all = await answer<{ data: LifecycleEvent[] }>(send(`/workspace/${workspace.id}/lifecycle-events`, 'GET'), 200);
        assert.deepEqual(
          all.data.map((event) => event.event),
          ['created', 'opened', 'closed', 'archived', 'unarchived', 'deleted', 'restored', 'created'],
        );
        const page = await answer<{ data: LifecycleEvent[] }>(send(`/workspace/${workspace.id}/lifecycle-events?limit=2&offset=3`, 'GET'), 200);
        assert.deepEqual(
          page.data.map((event) => event.event),
          ['archived', 'unarchived'],
        );
      });

      it('through the facade: recordLifecycleEvent and listLifecycleEvents', async () => {
        const workspace = await app.runloom.workspaces.create('acct-facade', { name: 'library' }, 'host-app');
        const archived = await app.runloom.workspaces.recordLifecycleEvent('acct-facade', workspace.id, 'archived', 'by the host', 'host-app');
        assert.equal((await app.runloom.workspaces.require('acct-facade', workspace.id)).status, 'archived');
        const events = await app.runloom.workspaces.listLifecycleEvents('acct-facade', workspace.id, { limit: 50, offset: 0 });
        assert.deepEqual(
          events.map((event) => [event.event, event.created_by]),
          [
            ['created', 'host-app'],
            ['archived', 'host-app'],
          ],
        );
        assert.equal(events[1]!.id, archived.id);
        await assert.rejects(app.runloom.workspaces.require('acct-other', workspace.id), /not found/);
      });

      it('through the facade: a host-given id that exists is a conflict, and that workspace’s files stay', async () => {
        const id = randomUUID();
        await app.runloom.workspaces.create('acct-host', { id, name: 'open folder' }, 'editor');
        const files = await app.runloom.workspaces.files('acct-host', id);
        await files.writeFile('work.txt', 'unsaved thoughts');
        for (const account of ['acct-host', 'acct-elsewhere']) {
          await assert.rejects(app.runloom.workspaces.create(account, { id, name: 'again' }, 'editor'), new RegExp(`workspace ${id} exists`));
        }
        assert.equal(new TextDecoder().decode(await files.readBytes('work.txt')), 'unsaved thoughts');
      });
    });

    describe('metadata summary', () => {
      it('counts files and bytes, adds every contributor’s counts and answers the latest activity', async () => {
        const workspace = await createWorkspace({ name: 'summary' });
        const files = await app.runloom.workspaces.files('acct-a', workspace.id);
        await files.writeFile('a.txt', 'hello');
        await files.writeFile('docs/deep/b.bin', new Uint8Array(1000));
        await files.mkdir('empty');
        const summary = await answer<{ data: Record<string, unknown> }>(send(`/workspace/${workspace.id}/metadata`, 'GET'), 200);
        const newestFile = Math.max(...(await Promise.all(['a.txt', 'docs/deep/b.bin', 'empty', 'docs', 'docs/deep'].map(async (path) => (await files.stat(path))!.mtime.getTime()))));
        const expectedActivity = [workspace.updated_at, new Date(newestFile).toISOString()].sort().at(-1);
        assert.deepEqual(summary.data, {
          file_count: 2,
          total_bytes: 1005,
          files_truncated: false,
          thread_count: 2,
          command_count: 5,
          process_runs: { running: 3, succeeded: 3 },
          last_activity_at: expectedActivity,
        });
      });

      it('takes the latest of the record, the lifecycle log and the contributors as last activity', async () => {
        const workspace = await createWorkspace({ name: 'quiet' });
        await clock.advance(60_000);
        const opened = await postEvent(workspace.id, 'opened');
        const summary = await answer<{ data: { last_activity_at: string; file_count: number } }>(send(`/workspace/${workspace.id}/metadata`, 'GET'), 200);
        // The empty workspace's root folder was made at real time; the lifecycle event is later (2030).
        assert.equal(summary.data.last_activity_at, opened.created_at);
        assert.equal(summary.data.file_count, 0);
        assert.deepEqual(await app.runloom.workspaceMetadata.summary('acct-a', workspace.id), summary.data);
      });
    });
  });
}

describeWorkspaces('embedded store');
describeWorkspaces('PostgreSQL');
