import assert from 'node:assert/strict';
import type { PublishedWorkspaceEvent } from '../packages/core/src/index';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { jsonCalls } from './support/json-calls';

const CONFIG_PATH = '.runloom/workspace-config.runloom.yaml';

interface ErrorBody {
  error: string;
  code: string;
  details?: { path: string; message: string; line?: number; column?: number }[];
}

describe('workspace config (docs/api.md#workspace-config)', function () {
  this.timeout(60_000);
  let app: TestRunloom;

  before(async () => {
    app = await startTestRunloom({ rateLimit: 0 });
  });
  after(async () => {
    await app?.close();
  });

  const { send, answer } = jsonCalls(() => app);

  async function newWorkspace(): Promise<string> {
    return (await answer<{ data: { id: string } }>(send('/workspaces', 'POST', { name: 'configured' }), 201)).data.id;
  }

  async function fileText(workspaceId: string): Promise<string> {
    const files = await app.runloom.workspaces.files('acct-a', workspaceId);
    return new TextDecoder().decode(await files.readBytes(CONFIG_PATH));
  }

  async function writeFile(workspaceId: string, text: string): Promise<void> {
    const files = await app.runloom.workspaces.files('acct-a', workspaceId);
    await files.writeFile(CONFIG_PATH, text);
  }

  const patch = (id: string, body: unknown) => send(`/workspace/${id}/config`, 'PATCH', body);
  const get = (id: string) => send(`/workspace/${id}/config`, 'GET');

  /** The events published on the workspace's stream from the start, once `count` have arrived. */
  function events(workspaceId: string, count: number): Promise<PublishedWorkspaceEvent['event'][]> {
    return new Promise((resolve) => {
      const seen: PublishedWorkspaceEvent['event'][] = [];
      const subscription = app.runloom.workspaceEvents.subscribe(
        workspaceId,
        (published) => {
          seen.push(published.event);
          if (seen.length < count) return;
          subscription.unsubscribe();
          resolve(seen);
        },
        { after: 0 },
      );
    });
  }

  it('answers {data: {}} for a workspace without the file', async () => {
    const id = await newWorkspace();
    assert.deepEqual(await answer(get(id), 200), { data: {} });
    assert.deepEqual(await app.runloom.workspaceConfig.get('acct-a', id), {});
  });

  it('PATCH creates the file, answers {message, data} and publishes file.created then config.updated (file.updated after)', async () => {
    const id = await newWorkspace();
    const body = { models: { default: { provider: 'anthropic', model: 'claude-sonnet-4-5' } } };
    const patched = await answer<{ message: string; data: unknown }>(patch(id, body), 200);
    assert.deepEqual(patched, { message: 'workspace configuration updated', data: body });
    assert.equal(await fileText(id), 'models:\n  default:\n    provider: anthropic\n    model: claude-sonnet-4-5\n');
    assert.deepEqual(await answer(get(id), 200), { data: body });
    await answer(patch(id, { extra: true }), 200);
    const stream = (await events(id, 5)).filter((event) => event.type !== 'workspace.lifecycle');
    const size = new TextEncoder().encode(await fileText(id)).length;
    assert.deepEqual(stream, [
      { type: 'file.created', path: CONFIG_PATH, size: size - 'extra: true\n'.length },
      { type: 'config.updated', path: CONFIG_PATH },
      { type: 'file.updated', path: CONFIG_PATH, size },
      { type: 'config.updated', path: CONFIG_PATH },
    ]);
  });

  it('deep-merges: objects merge, arrays replace, null deletes; comments, key order and untouched formatting stay', async () => {
    const id = await newWorkspace();
    await writeFile(
      id,
      [
        '# Workspace settings, kept by hand',
        'models:',
        '  # the model threads use',
        '  default:',
        '    provider: openai # cheap and fast',
        '    model: gpt-4o-mini',
        'tools: [search, browse]',
        'retired: yes please',
        'long: "a quoted value that is long enough to be folded by a serializer with a line width of eighty characters"',
        'zeta: 1',
        '',
      ].join('\n'),
    );
    const patched = await answer<{ data: unknown }>(
      patch(id, { models: { default: { model: 'gpt-4o' }, fallback: { provider: 'groq', model: 'llama-3' } }, tools: ['code'], retired: null, alpha: { on: true } }),
      200,
    );
    assert.deepEqual(patched.data, {
      models: { default: { provider: 'openai', model: 'gpt-4o' }, fallback: { provider: 'groq', model: 'llama-3' } },
      tools: ['code'],
      long: 'a quoted value that is long enough to be folded by a serializer with a line width of eighty characters',
      zeta: 1,
      alpha: { on: true },
    });
    assert.equal(
      await fileText(id),
      [
        '# Workspace settings, kept by hand',
        'models:',
        '  # the model threads use',
        '  default:',
        '    provider: openai # cheap and fast',
        '    model: gpt-4o',
        '  fallback:',
        '    provider: groq',
        '    model: llama-3',
        'tools: [ code ]',
        'long: "a quoted value that is long enough to be folded by a serializer with a line width of eighty characters"',
        'zeta: 1',
        'alpha:',
        '  on: true',
        '',
      ].join('\n'),
    );
  });

  it('validates the merged configuration before writing: 400 naming each path, the file unchanged', async () => {
    const id = await newWorkspace();
    await answer(patch(id, { models: { default: { provider: 'openai', model: 'gpt-4o' } } }), 200);
    const before = await fileText(id);
    for (const [body, path] of [
      [{ models: { default: { provider: 'openia' } } }, 'models.default.provider'],
      [{ models: { default: { model: '' } } }, 'models.default.model'],
      [{ models: { default: 'gpt-4o' } }, 'models.default'],
      [{ models: [1, 2] }, 'models'],
    ] as const) {
      const refused = await answer<ErrorBody>(patch(id, body), 400);
      assert.equal(refused.code, 'VALIDATION_FAILED');
      assert.deepEqual(
        refused.details!.map((detail) => detail.path),
        [path],
        JSON.stringify(body),
      );
      assert.match(refused.error, new RegExp(`patched configuration is invalid: ${path.replace(/\./g, '\\.')}`));
    }
    const unset = await answer<ErrorBody>(patch(id, { models: { default: { model: null } } }), 400);
    assert.deepEqual(
      unset.details!.map((detail) => detail.path),
      ['models.default.model'],
    );
    assert.equal(await fileText(id), before);
    await answer(patch(id, [1, 2]), 400);
    // Deleting the anchor an alias refers to would leave the file unreadable.
    await writeFile(id, 'base: &base {provider: openai, model: gpt-4o}\nmodels:\n  default: *base\n');
    const dangling = await answer<ErrorBody>(patch(id, { base: null }), 400);
    assert.match(dangling.error, /cannot be written: .*alias/i);
  });

  it('a broken file on disk: GET and PATCH answer 400 naming the line and column, never a 5xx, and the file stays', async () => {
    const id = await newWorkspace();
    const broken = 'models:\n  default:\n    provider: openai\n   model: [unclosed\n';
    await writeFile(id, broken);
    for (const response of [get(id), patch(id, { a: 1 })]) {
      const refused = await answer<ErrorBody>(response, 400);
      assert.match(refused.error, /^\.runloom\/workspace-config\.runloom\.yaml is invalid at line 4, column \d+: .+; fix the file/);
      assert.equal(refused.details![0]!.line, 4);
      assert.equal(refused.details![0]!.path, CONFIG_PATH);
    }
    assert.equal(await fileText(id), broken);
    await assert.rejects(app.runloom.workspaceConfig.get('acct-a', id), /line 4/);
  });

  it('a file that parses but is not a configuration: 400 locating the value, and a PATCH that fixes the value is accepted', async () => {
    const id = await newWorkspace();
    await writeFile(id, '- just\n- a list\n');
    const list = await answer<ErrorBody>(get(id), 400);
    assert.match(list.error, /at line 1, column 1: the configuration must be a mapping/);
    await writeFile(id, 'x: 1\nmodels:\n  default:\n    provider: nobody\n    model: m\n');
    const wrong = await answer<ErrorBody>(get(id), 400);
    assert.deepEqual(wrong.details!.map(({ path, line, column }) => ({ path, line, column })), [{ path: 'models.default.provider', line: 4, column: 15 }]);
    const fixed = await answer<{ data: unknown }>(patch(id, { models: { default: { provider: 'mistral' } } }), 200);
    assert.deepEqual(fixed.data, { x: 1, models: { default: { provider: 'mistral', model: 'm' } } });
    for (const text of ['\xff\xfe not utf-8', `${'['.repeat(100)}${']'.repeat(100)}`, 'a: &a [1]\nb: *a\nc: *unknown\n']) {
      const files = await app.runloom.workspaces.files('acct-a', id);
      await files.writeFile(CONFIG_PATH, text === '\xff\xfe not utf-8' ? new Uint8Array([0xff, 0xfe, 0x20]) : text);
      const refused = await answer<ErrorBody>(get(id), 400);
      assert.match(refused.error, /workspace-config\.runloom\.yaml (is not UTF-8|is invalid)/, refused.error);
    }
  });

  it('the configuration path being a directory is a 409', async () => {
    const id = await newWorkspace();
    const files = await app.runloom.workspaces.files('acct-a', id);
    await files.mkdir(CONFIG_PATH);
    const refused = await answer<ErrorBody>(get(id), 409);
    assert.match(refused.error, /is a directory/);
  });

  it('concurrent PATCHes to one workspace all land (serialised), none lost', async () => {
    const id = await newWorkspace();
    const keys = Array.from({ length: 25 }, (_, index) => `key${index}`);
    const answers = await Promise.all(keys.map((key, index) => patch(id, { [key]: index, shared: { [key]: true } })));
    assert.deepEqual(
      answers.map((response) => response.status),
      keys.map(() => 200),
    );
    const { data } = await answer<{ data: Record<string, unknown> }>(get(id), 200);
    assert.deepEqual(
      keys.filter((key) => data[key] === undefined || (data.shared as Record<string, unknown>)[key] !== true),
      [],
    );
  });

  it('the facade get() answers the typed default model', async () => {
    const id = await newWorkspace();
    const service = app.runloom.workspaceConfig;
    await service.patch('acct-a', id, { models: { default: { provider: 'google', model: 'gemini-2.5-pro' } } });
    const config = await service.get('acct-a', id);
    assert.deepEqual(config.models?.default, { provider: 'google', model: 'gemini-2.5-pro' });
    await assert.rejects(service.get('acct-b', id), /not found/);
  });
});
