import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestSchema, TEST_DATABASE_URL } from '../packages/core/test-support/postgres-test-store';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { json, saveThread } from './support/threads';

const userMessage = (id: string, text: string) => ({ id, role: 'user', parts: [{ type: 'text', text }] });

/**
 * Two instances on one PostgreSQL database and one workspaces dir (as behind a load balancer):
 * read-modify-writes of one workspace's files sent to both at once all land, their locks being the
 * database's, not each process's.
 */
describe('a workspaces dir shared by two instances', function () {
  this.timeout(60_000);
  const schema = createTestSchema();
  const workspacesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-shared-workspaces-'));
  const shared = {
    databaseUrl: `${TEST_DATABASE_URL}?schema=${schema.schema}`,
    workspacesDir,
    secretKey: Buffer.alloc(32, 9).toString('base64'),
    rateLimit: 0,
  };
  let a: TestRunloom;
  let b: TestRunloom;
  let workspaceId: string;

  before(async () => {
    a = await startTestRunloom(shared);
    b = await startTestRunloom(shared);
    await b.token();
    const created = await a.request('/workspaces', json('POST', { name: 'shared' }));
    assert.equal(created.status, 201, await created.clone().text());
    workspaceId = ((await created.json()) as { data: { id: string } }).data.id;
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await schema.drop();
    fs.rmSync(workspacesDir, { recursive: true, force: true });
  });

  it('keeps every message of PATCHes of one thread sent to both instances at once', async () => {
    await saveThread(a, workspaceId, 'busy');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        (index % 2 === 0 ? a : b).request(`/workspace/${workspaceId}/thread/busy`, json('PATCH', { messages: [userMessage(`p${index}`, `message ${index}`)] })),
      ),
    );
    assert.deepEqual(
      answers.map((answer) => answer.status),
      answers.map(() => 200),
    );
    for (const instance of [a, b]) {
      const thread = ((await (await instance.request(`/workspace/${workspaceId}/thread/busy`)).json()) as { data: { messages: { id: string }[] } }).data;
      assert.deepEqual(new Set(thread.messages.map((message) => message.id)), new Set(Array.from({ length: 20 }, (_, index) => `p${index}`)));
    }
  });

  it('lands every config PATCH sent to both instances at once', async () => {
    const keys = Array.from({ length: 16 }, (_, index) => `key${index}`);
    const answers = await Promise.all(
      keys.map((key, index) => (index % 2 === 0 ? a : b).request(`/workspace/${workspaceId}/config`, json('PATCH', { [key]: index }))),
    );
    assert.deepEqual(
      answers.map((answer) => answer.status),
      keys.map(() => 200),
    );
    const { data } = (await (await b.request(`/workspace/${workspaceId}/config`)).json()) as { data: Record<string, unknown> };
    assert.deepEqual(
      keys.filter((key, index) => data[key] !== index),
      [],
    );
  });

  it('keeps both halves of PATCHes of one command sent to the two instances at once', async () => {
    const triggers = Array.from({ length: 8 }, (_, index) => `cmd-${index}`);
    for (const trigger of triggers) {
      const created = await a.request(`/workspace/${workspaceId}/commands`, json('POST', { trigger, type: 'prompt', template: 'Say it' }));
      assert.equal(created.status, 201, await created.clone().text());
    }
    const answers = await Promise.all(
      triggers.flatMap((trigger) => [
        a.request(`/workspace/${workspaceId}/command/${trigger}`, json('PATCH', { description: `about ${trigger}` })),
        b.request(`/workspace/${workspaceId}/command/${trigger}`, json('PATCH', { category: 'shared' })),
      ]),
    );
    assert.deepEqual(
      answers.map((answer) => answer.status),
      answers.map(() => 200),
    );
    for (const instance of [a, b]) {
      const { data } = (await (await instance.request(`/workspace/${workspaceId}/commands`)).json()) as { data: { trigger: string; description?: string; category: string }[] };
      assert.deepEqual(
        data.filter((command) => command.description !== `about ${command.trigger}` || command.category !== 'shared').map((command) => command.trigger),
        [],
      );
    }
  });
});
