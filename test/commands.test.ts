import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { json } from './support/threads';

/** Commands of a workspace through HTTP (docs/api.md#commands): files, index, search, usage. */
describe('workspace commands', () => {
  let t: TestRunloom;
  let workspaceId: string;
  let base: string;

  before(async () => {
    t = await startTestRunloom({ shellCommands: true });
  });
  after(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    workspaceId = (await dataOf<{ id: string }>(await t.request('/workspaces', json('POST', { name: 'commands' })), 201)).id;
    base = `/workspace/${workspaceId}`;
  });

  async function create(body: Record<string, unknown>): Promise<Response> {
    return t.request(`${base}/commands`, json('POST', body));
  }

  async function dataOf<T = any>(response: Response, status = 200): Promise<T> {
    const text = await response.text();
    assert.equal(response.status, status, text);
    return (JSON.parse(text) as { data: T }).data;
  }

  async function get<T = any>(url: string): Promise<T> {
    return dataOf<T>(await t.request(url));
  }

  async function localRoot(): Promise<string> {
    return (await t.runloom.workspaces.files('acct-a', workspaceId)).localRoot!;
  }

  const triggers = (commands: { trigger: string }[]): string[] => commands.map((command) => command.trigger);

  it('creates a command as a YAML file in the workspace, reads, patches and deletes it', async () => {
    const created = await dataOf(await create({ trigger: 'summarize', type: 'prompt', template: 'Summarize {{text}}', args: [{ name: 'text', required: true }] }), 201);
    assert.equal(created.name, 'summarize');
    assert.equal(created.category, 'general');
    assert.equal(created.usage_count, 0);
    assert.equal(created.last_used_at, null);
    const file = path.join(await localRoot(), '.runloom/commands/summarize.yaml');
    assert.match(fs.readFileSync(file, 'utf8'), /template: Summarize \{\{text\}\}/);

    assert.equal((await get(`${base}/command/summarize`)).template, 'Summarize {{text}}');
    const patched = await t.request(`${base}/command/summarize`, json('PATCH', { description: 'short', category: 'writing' }));
    assert.equal(patched.status, 200);
    const body = (await patched.json()) as { message: string; data: { description: string; category: string; template: string } };
    assert.ok(body.message);
    assert.deepEqual([body.data.description, body.data.category, body.data.template], ['short', 'writing', 'Summarize {{text}}']);
    assert.match(fs.readFileSync(file, 'utf8'), /category: writing/);

    // A type change keeps only the new type's field.
    const shell = await dataOf(await t.request(`${base}/command/summarize`, json('PATCH', { type: 'shell', argv: ['echo', 'hi'], args: [] })));
    assert.equal(shell.template, undefined);
    assert.deepEqual(shell.argv, ['echo', 'hi']);

    const deleted = await t.request(`${base}/command/summarize`, { method: 'DELETE' });
    assert.equal(deleted.status, 200);
    assert.equal(fs.existsSync(file), false);
    assert.equal((await t.request(`${base}/command/summarize`)).status, 404);
    assert.equal((await t.request(`${base}/command/summarize`, { method: 'DELETE' })).status, 404);
  });

  it('refuses a trigger that is not a slug, a duplicate (409) and definitions that break the rules, naming the field', async () => {
    for (const trigger of ['Upper', 'has space', '../x', 'a--b', '', 'x'.repeat(65), 'dot.ted']) {
      const response = await create({ trigger, type: 'shell', argv: ['true'] });
      assert.equal(response.status, 400, trigger);
      assert.match(((await response.json()) as { error: string }).error, /trigger/);
    }
    assert.equal((await create({ trigger: 'dup', type: 'shell', argv: ['true'] })).status, 201);
    const duplicate = await create({ trigger: 'dup', type: 'prompt', template: 'x' });
    assert.equal(duplicate.status, 409);
    assert.match(((await duplicate.json()) as { error: string }).error, /already exists/);

    const cases: [Record<string, unknown>, RegExp][] = [
      [{ trigger: 'a', type: 'prompt' }, /needs template/],
      [{ trigger: 'a', type: 'shell', argv: [] }, /argv/],
      [{ trigger: 'a', type: 'runnable' }, /runnable_id/],
      [{ trigger: 'a', type: 'runnable', runnable_id: 'missing' }, /no runnable missing in this account/],
      [{ trigger: 'a', type: 'nope', template: 'x' }, /type must be one of/],
      [{ trigger: 'a', type: 'prompt', template: 'Hi {{who}}' }, /undeclared args: who/],
      [{ trigger: 'a', type: 'shell', argv: ['x'], args: [{ name: 'b' }, { name: 'c', required: true }] }, /required args must come before optional/],
      [{ trigger: 'a', type: 'shell', argv: ['x'], args: [{ name: 'b' }, { name: 'b' }] }, /declared twice/],
      [{ trigger: 'a', type: 'shell', argv: ['x\u0000y'] }, /NUL/],
    ];
    for (const [body, message] of cases) {
      const response = await create(body);
      const text = await response.text();
      assert.equal(response.status, 400, text);
      assert.match(text, message);
    }
    const badPatch = await t.request(`${base}/command/dup`, json('PATCH', { type: 'prompt' }));
    assert.equal(badPatch.status, 400);
    assert.match(await badPatch.text(), /needs template/);
  });

  it('lists by trigger with type, search, offset and limit; an invalid type is 400', async () => {
    await create({ trigger: 'git-commit', name: 'Commit changes', type: 'shell', argv: ['git', 'commit'], category: 'git' });
    await create({ trigger: 'git-push', name: 'Push', type: 'shell', argv: ['git', 'push'], category: 'git' });
    await create({ trigger: 'translate', type: 'prompt', template: 'Translate {{text}}', args: [{ name: 'text' }], description: 'into French' });
    assert.deepEqual(triggers(await get(`${base}/commands`)), ['git-commit', 'git-push', 'translate']);
    assert.deepEqual(triggers(await get(`${base}/commands?type=prompt`)), ['translate']);
    assert.deepEqual(triggers(await get(`${base}/commands?search=FRENCH`)), ['translate']);
    assert.deepEqual(triggers(await get(`${base}/commands?search=git&limit=1&offset=1`)), ['git-push']);
    assert.deepEqual(triggers(await get(`${base}/commands?offset=1&limit=1`)), ['git-push']);
    const invalid = await t.request(`${base}/commands?type=bogus`);
    assert.equal(invalid.status, 400);
    assert.match(await invalid.text(), /type must be one of prompt, runnable, process, shell/);
    assert.equal((await t.request(`${base}/commands?limit=0x10`)).status, 400);
  });

  it('picks up command files written, changed or removed outside the API', async () => {
    const folder = path.join(await localRoot(), '.runloom/commands');
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, 'hand-made.yaml'), 'type: shell\nargv: [echo, hand]\ncategory: manual\n');
    fs.writeFileSync(path.join(folder, 'broken.yaml'), 'type: [unclosed\n');
    fs.writeFileSync(path.join(folder, 'notes.txt'), 'not a command');
    assert.deepEqual(triggers(await get(`${base}/commands`)), ['hand-made']);
    fs.writeFileSync(path.join(folder, 'hand-made.yaml'), 'type: prompt\ntemplate: changed by hand, longer than before\n');
    assert.equal((await get(`${base}/command/hand-made`)).template, 'changed by hand, longer than before');
    fs.rmSync(path.join(folder, 'hand-made.yaml'));
    assert.deepEqual(await get(`${base}/commands`), []);
  });

  it('suggests by prefix and with a typo, the trigger prefix first', async () => {
    await create({ trigger: 'deploy', name: 'Deploy the app', type: 'shell', argv: ['true'] });
    await create({ trigger: 'dev-server', name: 'Start dev', type: 'shell', argv: ['true'] });
    await create({ trigger: 'redeploy', name: 'Deploy again', type: 'shell', argv: ['true'] });
    await create({ trigger: 'lint', name: 'Lint', type: 'shell', argv: ['true'] });
    const suggested = triggers(await get(`${base}/commands/suggestions?query=dep`));
    assert.deepEqual(suggested, ['deploy', 'redeploy']);
    assert.deepEqual(triggers(await get(`${base}/commands/suggestions?query=de`)).slice(0, 2).sort(), ['deploy', 'dev-server']);
    assert.equal(triggers(await get(`${base}/commands/suggestions?query=deplyo`))[0], 'deploy');
    assert.deepEqual(await get(`${base}/commands/suggestions?query=zzz`), []);
    assert.equal(triggers(await get(`${base}/commands/suggestions?limit=2`)).length, 2);
    assert.equal((await t.request(`${base}/commands/search`)).status, 400);
  });

  it('searches the full text, ranked, answering results and total', async () => {
    await create({ trigger: 'explain', type: 'prompt', template: 'Explain this regular expression: {{re}}', args: [{ name: 're' }] });
    await create({ trigger: 'regex-test', name: 'Regex tester', type: 'shell', argv: ['grep', '-E'], description: 'tests a regular expression' });
    await create({ trigger: 'other', type: 'shell', argv: ['true'], description: 'unrelated' });
    const found = await get<{ results: { trigger: string; score: number }[]; total: number }>(`${base}/commands/search?query=regex`);
    assert.equal(found.total, 1);
    assert.equal(found.results[0]!.trigger, 'regex-test');
    const expression = await get<{ results: { trigger: string; score: number }[]; total: number }>(`${base}/commands/search?query=regular%20expression&limit=1`);
    assert.equal(expression.total, 2);
    assert.equal(expression.results.length, 1);
    assert.ok(expression.results[0]!.score > 0);
  });

  it('groups by category and lists recent and popular commands from real executions', async () => {
    await create({ trigger: 'one', type: 'shell', argv: ['true'], category: 'alpha' });
    await create({ trigger: 'two', type: 'shell', argv: ['true'], category: 'alpha' });
    await create({ trigger: 'three', type: 'shell', argv: ['true'], category: 'beta' });
    assert.deepEqual(await get(`${base}/commands/categories`), { alpha: 2, beta: 1 });
    assert.deepEqual(triggers(await get(`${base}/commands/categories/alpha`)), ['one', 'two']);
    assert.deepEqual(await get(`${base}/commands/categories/none`), []);
    assert.deepEqual(await get(`${base}/commands/recent`), []);

    for (const trigger of ['two', 'two', 'one', 'two', 'three']) {
      const response = await t.request(`${base}/command/${trigger}/execute`, json('POST', { args: [] }));
      assert.equal(response.status, 200, await response.clone().text());
    }
    assert.deepEqual(triggers(await get(`${base}/commands/popular`)), ['two', 'three', 'one']);
    assert.deepEqual(triggers(await get(`${base}/commands/recent?limit=2`)), ['three', 'two']);
    const two = await get(`${base}/command/two`);
    assert.equal(two.usage_count, 3);
    assert.ok(two.last_used_at);
    assert.equal((await t.request(`${base}/commands/popular?limit=-1`)).status, 400);
  });

  it("keeps other accounts' workspaces and commands out of reach", async () => {
    await create({ trigger: 'mine', type: 'shell', argv: ['true'] });
    for (const url of [`${base}/commands`, `${base}/command/mine`, `${base}/commands/categories`]) {
      assert.equal((await t.request(url, { account: 'acct-b' })).status, 404, url);
    }
    assert.equal((await t.request(`${base}/command/mine/execute`, { ...json('POST', {}), account: 'acct-b' })).status, 404);
    assert.equal((await t.request(`${base}/commands`, { ...json('POST', { trigger: 'x', type: 'shell', argv: ['true'] }), account: 'acct-b' })).status, 404);
  });
});
