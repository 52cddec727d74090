import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { startTestRunloom, type TestRunloom } from './support/harness';

const PROMPT_YAML = `name: summarize
prompt:
  system: You are brief.
  messages:
    - role: user
      content: "Summarize {{document}}"
llms:
  - model: anthropic/claude-sonnet-4
inputs:
  - name: document
    mime_types: [text/plain]
`;

const FLOW_YAML = `type: flow
steps:
  - id: first
    uses: {transform: template, template: hello}
`;

const AGENT_JSON = JSON.stringify({ type: 'agent', model: 'gpt-4o', tools: [{ type: 'workspace_file_read' }], max_steps: 3 });

const MISSING_ID = '0190a0b0-0000-7000-8000-0000000000ff';

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

describe('runnables over HTTP', () => {
  let t: TestRunloom;

  before(async () => {
    t = await startTestRunloom();
  });
  after(async () => {
    await t.close();
  });

  const json = (method: string, body: unknown, account?: string): RequestInit & { account?: string } => ({
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    account,
  });

  async function create(body: Record<string, unknown>, account?: string): Promise<Record<string, any>> {
    const response = await t.request('/v1/runnables', json('POST', body, account));
    assert.equal(response.status, 201, await response.clone().text());
    return (await response.json()) as Record<string, any>;
  }

  async function list(query = '', account?: string): Promise<Record<string, any>[]> {
    const response = await t.request(`/v1/runnables${query}`, { account });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as Record<string, any>[];
  }

  describe('create and read', () => {
    it('creates from YAML: 201 with the record, derived type, hash, provider and bare model', async () => {
      const response = await t.request('/v1/runnables', json('POST', { name: 'Summarize', description: 'Short summaries', tags: ['docs'], config_content: PROMPT_YAML }));
      assert.equal(response.status, 201);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      const runnable = (await response.json()) as Record<string, any>;
      assert.deepEqual(Object.keys(runnable).sort(), [
        'account_id',
        'config_content',
        'config_content_parsed',
        'config_content_sha256',
        'config_content_type',
        'created_at',
        'created_by',
        'description',
        'id',
        'name',
        'tags',
        'updated_at',
      ]);
      assert.match(runnable.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(runnable.account_id, 'acct-a');
      assert.equal(runnable.name, 'Summarize');
      assert.equal(runnable.description, 'Short summaries');
      assert.deepEqual(runnable.tags, ['docs']);
      assert.equal(runnable.config_content, PROMPT_YAML);
      assert.equal(runnable.config_content_type, 'prompt');
      assert.equal(runnable.config_content_sha256, sha256(PROMPT_YAML));
      assert.equal(runnable.config_content_parsed.name, 'summarize');
      assert.deepEqual(runnable.config_content_parsed.llms, [{ model: 'claude-sonnet-4', provider: 'anthropic' }]);
      assert.deepEqual(runnable.config_content_parsed.inputs, [{ name: 'document', mime_types: ['text/plain'], type: 'text', required: true }]);
      assert.equal(typeof runnable.created_by, 'string');
      assert.ok(runnable.created_by.length > 0);
      assert.equal(runnable.created_at, runnable.updated_at);
      assert.ok(!Number.isNaN(Date.parse(runnable.created_at)) && runnable.created_at.endsWith('Z'));

      const read = await t.request(`/v1/runnable/${runnable.id}`);
      assert.equal(read.status, 200);
      assert.deepEqual(await read.json(), runnable);
    });

    it('creates flow and agent runnables, typed from the configuration', async () => {
      const flow = await create({ name: 'flow', config_content: FLOW_YAML });
      assert.equal(flow.config_content_type, 'flow');
      const agent = await create({ name: 'agent', config_content: AGENT_JSON });
      assert.equal(agent.config_content_type, 'agent');
      assert.equal(agent.config_content_sha256, sha256(AGENT_JSON));
      assert.equal(agent.config_content_parsed.provider, 'openai');
    });

    it('creates from config_content_parsed, writing the configuration as YAML', async () => {
      const parsed = { prompt: { messages: [{ role: 'user', content: 'Hi' }] }, llms: [{ model: 'gemini-2.0-flash' }] };
      const runnable = await create({ name: 'from object', config_content_parsed: parsed });
      assert.deepEqual(parseYaml(runnable.config_content), parsed);
      assert.equal(runnable.config_content_sha256, sha256(runnable.config_content));
      assert.equal(runnable.config_content_parsed.llms[0].provider, 'google');
      assert.deepEqual(runnable.tags, []);
      assert.equal(runnable.description, undefined);
    });

    it('ignores unknown and response-only fields in the payload', async () => {
      const runnable = await create({
        name: 'extra',
        config_content: FLOW_YAML,
        config_content_type: 'agent',
        id: MISSING_ID,
        account_id: 'acct-b',
        surprise: true,
      });
      assert.notEqual(runnable.id, MISSING_ID);
      assert.equal(runnable.account_id, 'acct-a');
      assert.equal(runnable.config_content_type, 'flow');
      assert.equal(runnable.surprise, undefined);
    });
  });

  describe('list', () => {
    let ids: Record<string, string>;
    let other: TestRunloom;

    before(async () => {
      other = await startTestRunloom();
      const made = async (name: string, config_content: string, tags: string[]) => (await createOn(other, { name, config_content, tags })).id as string;
      ids = {
        a: await made('a', PROMPT_YAML, ['x', 'y']),
        b: await made('b', FLOW_YAML, ['x']),
        c: await made('c', AGENT_JSON, ['y', 'z']),
        d: await made('d', PROMPT_YAML, []),
      };
    });
    after(async () => {
      await other.close();
    });

    async function createOn(target: TestRunloom, body: Record<string, unknown>): Promise<Record<string, any>> {
      const response = await target.request('/v1/runnables', json('POST', body));
      assert.equal(response.status, 201);
      return (await response.json()) as Record<string, any>;
    }

    async function names(query: string): Promise<string[]> {
      const response = await other.request(`/v1/runnables${query}`);
      assert.equal(response.status, 200, await response.clone().text());
      return ((await response.json()) as { name: string }[]).map((runnable) => runnable.name);
    }

    it('answers a JSON array of every runnable of the account, oldest first', async () => {
      assert.deepEqual(await names(''), ['a', 'b', 'c', 'd']);
      const response = await other.request('/v1/runnables');
      const [first] = (await response.json()) as Record<string, any>[];
      assert.equal(first?.id, ids.a);
      assert.equal(first?.config_content, PROMPT_YAML);
      assert.equal(first?.config_content_parsed.llms[0].provider, 'anthropic');
    });

    it('filters by type', async () => {
      assert.deepEqual(await names('?type=prompt'), ['a', 'd']);
      assert.deepEqual(await names('?type=flow'), ['b']);
      assert.deepEqual(await names('?type=agent'), ['c']);
    });

    it('filters by tags, repeated or comma-separated: a runnable must have all of them', async () => {
      assert.deepEqual(await names('?tags=x'), ['a', 'b']);
      assert.deepEqual(await names('?tags=x&tags=y'), ['a']);
      assert.deepEqual(await names('?tags=x,y'), ['a']);
      assert.deepEqual(await names('?tags=y'), ['a', 'c']);
      assert.deepEqual(await names('?tags=nope'), []);
      assert.deepEqual(await names('?type=agent&tags=y'), ['c']);
      assert.deepEqual(await names('?type=flow&tags=y'), []);
    });

    it('pages with limit and offset', async () => {
      assert.deepEqual(await names('?limit=2'), ['a', 'b']);
      assert.deepEqual(await names('?limit=2&offset=2'), ['c', 'd']);
      assert.deepEqual(await names('?offset=3'), ['d']);
    });

    it('answers a list asked again as the store holds it now: after every create, update and delete, on every filter', async () => {
      const account = 'acct-list-again';
      const listed = async (query: string) => (await list(query, account)).map((runnable) => `${runnable.name}:${runnable.tags.join('+')}`);
      const queries = ['', '?tags=x', '?limit=1&offset=1'];
      const answers = async () => Promise.all(queries.map(listed));
      assert.deepEqual(await answers(), [[], [], []]);
      const first = await create({ name: 'first', config_content: FLOW_YAML, tags: ['x'] }, account);
      assert.deepEqual(await answers(), [['first:x'], ['first:x'], []]);
      await create({ name: 'second', config_content: FLOW_YAML }, account);
      assert.deepEqual(await answers(), [['first:x', 'second:'], ['first:x'], ['second:']]);
      const patched = await t.request(`/v1/runnable/${first.id}`, { ...json('PATCH', { name: 'renamed', tags: [] }), account });
      assert.equal(patched.status, 200);
      assert.deepEqual(await answers(), [['renamed:', 'second:'], [], ['second:']]);
      assert.equal((await t.request(`/v1/runnable/${first.id}`, { method: 'DELETE', account })).status, 200);
      assert.deepEqual(await answers(), [['second:'], [], []]);
    });

    it('refuses an unknown type and bad paging values with 400 saying what to fix', async () => {
      for (const query of ['?type=chain', '?limit=0', '?limit=abc', '?offset=-1']) {
        const response = await other.request(`/v1/runnables${query}`);
        assert.equal(response.status, 400, query);
        const body = (await response.json()) as { error: string; details: { path: string }[] };
        assert.equal(typeof body.error, 'string');
        assert.ok(body.details.length > 0, query);
      }
      const response = await other.request('/v1/runnables?type=chain');
      const body = (await response.json()) as { details: { path: string }[] };
      assert.equal(body.details[0]?.path, 'type');
    });
  });

  describe('update and versions', () => {
    it('changes name, description and tags without a new version', async () => {
      const runnable = await create({ name: 'before', description: 'old', tags: ['a'], config_content: FLOW_YAML });
      const read = async () => [
        (await (await t.request(`/v1/runnable/${runnable.id}`)).json()) as Record<string, any>,
        ...((await (await t.request('/v1/runnables')).json()) as Record<string, any>[]).filter((listed) => listed.id === runnable.id),
      ];
      assert.deepEqual((await read()).map((seen) => seen.name), ['before', 'before']);
      const response = await t.request(`/v1/runnable/${runnable.id}`, json('PATCH', { name: 'after', tags: ['b', 'c'] }));
      assert.equal(response.status, 200);
      const updated = (await response.json()) as Record<string, any>;
      assert.equal(updated.name, 'after');
      assert.equal(updated.description, 'old');
      assert.deepEqual(updated.tags, ['b', 'c']);
      assert.equal(updated.config_content, FLOW_YAML);
      assert.equal(updated.created_at, runnable.created_at);
      assert.ok(updated.updated_at >= runnable.updated_at);
      const cleared = (await (await t.request(`/v1/runnable/${runnable.id}`, json('PATCH', { description: null }))).json()) as Record<string, any>;
      assert.equal(cleared.description, undefined);
      assert.equal(cleared.name, 'after');
      // Reads answer the record as it is now, never one read before the change.
      assert.deepEqual(await read(), [cleared, cleared]);
      const versions = (await (await t.request(`/v1/runnable/${runnable.id}/versions`)).json()) as unknown[];
      assert.equal(versions.length, 1);
    });

    it('keeps a version history of configuration changes', async () => {
      const runnable = await create({ name: 'versioned', config_content: FLOW_YAML });
      const patched = await t.request(`/v1/runnable/${runnable.id}`, json('PATCH', { config_content: AGENT_JSON }));
      assert.equal(patched.status, 200);
      const updated = (await patched.json()) as Record<string, any>;
      assert.equal(updated.config_content_type, 'agent');
      assert.equal(updated.config_content_sha256, sha256(AGENT_JSON));
      assert.equal(updated.config_content_parsed.model, 'gpt-4o');
      // The same text again is no change; a new object is.
      await t.request(`/v1/runnable/${runnable.id}`, json('PATCH', { config_content: AGENT_JSON }));
      const third = (await (await t.request(`/v1/runnable/${runnable.id}`, json('PATCH', { config_content_parsed: { prompt: { system: 'v3' } } }))).json()) as Record<
        string,
        any
      >;
      assert.equal(third.config_content_type, 'prompt');

      const response = await t.request(`/v1/runnable/${runnable.id}/versions`);
      assert.equal(response.status, 200);
      const versions = (await response.json()) as Record<string, any>[];
      assert.deepEqual(
        versions.map((version) => [version.version, version.config_content, version.config_content_sha256]),
        [
          [1, FLOW_YAML, sha256(FLOW_YAML)],
          [2, AGENT_JSON, sha256(AGENT_JSON)],
          [3, third.config_content, third.config_content_sha256],
        ],
      );
      for (const version of versions) {
        assert.deepEqual(Object.keys(version).sort(), ['config_content', 'config_content_sha256', 'created_at', 'created_by', 'version']);
        assert.equal(version.created_by, runnable.created_by);
      }
      assert.equal((await (await t.request(`/v1/runnable/${runnable.id}`)).json() as Record<string, any>).config_content, third.config_content);
    });

    it('refuses an invalid configuration with 400 and the diagnostics, changing nothing', async () => {
      const runnable = await create({ name: 'stable', config_content: FLOW_YAML });
      const response = await t.request(`/v1/runnable/${runnable.id}`, json('PATCH', { name: 'renamed', config_content: 'type: flow\nsteps: []\n' }));
      assert.equal(response.status, 400);
      const body = (await response.json()) as { error: string; details: { path: string; message: string }[] };
      assert.deepEqual(
        body.details.map((detail) => detail.path),
        ['steps'],
      );
      assert.deepEqual(await (await t.request(`/v1/runnable/${runnable.id}`)).json(), runnable);
    });

    it('answers 200 with the record unchanged for an empty patch', async () => {
      const runnable = await create({ name: 'same', config_content: FLOW_YAML });
      const response = await t.request(`/v1/runnable/${runnable.id}`, json('PATCH', {}));
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), runnable);
    });

    it('keeps both of two concurrent updates of different fields', async () => {
      const runnable = await create({ name: 'race', config_content: FLOW_YAML });
      const [first, second] = await Promise.all([
        t.request(`/v1/runnable/${runnable.id}`, json('PATCH', { name: 'raced' })),
        t.request(`/v1/runnable/${runnable.id}`, json('PATCH', { tags: ['raced'] })),
      ]);
      assert.deepEqual([first.status, second.status], [200, 200]);
      const stored = (await (await t.request(`/v1/runnable/${runnable.id}`)).json()) as Record<string, any>;
      assert.equal(stored.name, 'raced');
      assert.deepEqual(stored.tags, ['raced']);
    });
  });

  describe('delete', () => {
    it('answers 200 {id}; afterwards the runnable and its versions are gone everywhere', async () => {
      const runnable = await create({ name: 'doomed', config_content: FLOW_YAML });
      const response = await t.request(`/v1/runnable/${runnable.id}`, { method: 'DELETE' });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { id: runnable.id });
      for (const [path, method] of [
        [`/v1/runnable/${runnable.id}`, 'GET'],
        [`/v1/runnable/${runnable.id}`, 'DELETE'],
        [`/v1/runnable/${runnable.id}/versions`, 'GET'],
      ] as const) {
        assert.equal((await t.request(path, { method })).status, 404, `${method} ${path}`);
      }
      assert.equal((await list()).some((item) => item.id === runnable.id), false);
    });
  });

  describe('account isolation', () => {
    it("answers another account's runnable exactly like a missing one, on every route", async () => {
      const runnable = await create({ name: 'private', tags: ['secret'], config_content: FLOW_YAML });
      const attempts: [string, RequestInit & { account?: string }][] = [
        [`/v1/runnable/${runnable.id}`, { account: 'acct-b' }],
        [`/v1/runnable/${runnable.id}`, json('PATCH', { name: 'stolen' }, 'acct-b')],
        [`/v1/runnable/${runnable.id}/versions`, { account: 'acct-b' }],
        [`/v1/runnable/${runnable.id}`, { method: 'DELETE', account: 'acct-b' }],
      ];
      for (const [path, init] of attempts) {
        const theirs = await t.request(path, init);
        const missing = await t.request(path.replace(runnable.id, MISSING_ID), init);
        assert.equal(theirs.status, 404, `${init.method ?? 'GET'} ${path}`);
        assert.equal(missing.status, 404);
        const [theirsBody, missingBody] = [(await theirs.json()) as { error: string }, (await missing.json()) as { error: string }];
        assert.equal(theirsBody.error.replace(runnable.id, MISSING_ID), missingBody.error);
      }
      assert.deepEqual(await list('?tags=secret', 'acct-b'), []);
      assert.deepEqual(await (await t.request(`/v1/runnable/${runnable.id}`)).json(), runnable);
    });
  });

  describe('bad input', () => {
    async function expect400(body: unknown, path: string): Promise<{ error: string; details: { path: string; message: string }[] }> {
      const response = await t.request('/v1/runnables', json('POST', body));
      assert.equal(response.status, 400, JSON.stringify(body));
      const answer = (await response.json()) as { error: string; details: { path: string; message: string }[] };
      assert.ok(answer.details.some((detail) => detail.path === path), `${JSON.stringify(answer)} names ${path}`);
      return answer;
    }

    it('refuses missing and wrongly typed fields with 400 {error, details}', async () => {
      await expect400({ config_content: FLOW_YAML }, 'name');
      await expect400({ name: 'x' }, 'config_content');
      await expect400({ name: 42, config_content: FLOW_YAML }, 'name');
      await expect400({ name: '   ', config_content: FLOW_YAML }, 'name');
      await expect400({ name: 'x', config_content: 42 }, 'config_content');
      await expect400({ name: 'x', config_content_parsed: 'prompt' }, 'config_content_parsed');
      await expect400({ name: 'x', config_content: FLOW_YAML, tags: 'a' }, 'tags');
      await expect400({ name: 'x', config_content: FLOW_YAML, tags: ['a,b'] }, 'tags.0');
      await expect400({ name: 'x', config_content: FLOW_YAML, description: 5 }, 'description');
      const response = await t.request('/v1/runnables', json('POST', ['not', 'an', 'object']));
      assert.equal(response.status, 400);
    });

    it('refuses invalid configurations with the diagnostics as details, with positions', async () => {
      const answer = await expect400({ name: 'x', config_content: 'prompt:\n  messages:\n    - role: robot\n      content: hi\n' }, 'prompt.messages.0.role');
      assert.match(answer.error, /config_content: prompt\.messages\.0\.role/);
      assert.deepEqual((answer.details[0] as Record<string, unknown>).line, 3);
      await expect400({ name: 'x', config_content: 'prompt: [unclosed' }, '');
      await expect400({ name: 'x', config_content: '' }, '');
      await expect400({ name: 'x', config_content: 'type: chain' }, 'type');
      await expect400({ name: 'x', config_content: 'prompt: {system: hi}\nllms: [{model: my-own-model}]\n' }, 'llms.0.provider');
      await expect400({ name: 'x', config_content_parsed: { type: 'flow', steps: [{ id: 'a', needs: ['a'], uses: { transform: 'template', template: 'x' } }] } }, 'steps.0.needs.0');
      await expect400(
        { name: 'x', config_content: 'prompt: {system: hi}\ninputs:\n  - {name: a, metadata: {schema: {type: nope}}}\n' },
        'inputs.0.metadata.schema',
      );
    });

    it('refuses configuration text nested too deeply to read, as 400', async () => {
      const depth = 2000;
      const answer = await expect400({ name: 'deep', config_content: `prompt: {system: x}\ndeep: ${'['.repeat(depth)}${']'.repeat(depth)}\n` }, '');
      assert.match(answer.error, /nested at most 64 levels deep/);
    });

    it('refuses, through the service API, a configuration object too deeply nested to write', async () => {
      let nested: unknown = 'leaf';
      for (let level = 0; level < 20_000; level++) nested = [nested];
      await assert.rejects(t.runloom.runnables.create('acct-a', { name: 'deep', config_content_parsed: { prompt: { system: 'x' }, deep: nested } }, 'service-caller'), {
        name: 'DomainError',
        code: 'VALIDATION_FAILED',
      });
    });

    it('refuses a body over 1 MiB with 413, another media type with 415, malformed JSON with 400', async () => {
      const huge = await t.request('/v1/runnables', json('POST', { name: 'x', config_content: `# ${'a'.repeat(1024 * 1024)}\n${FLOW_YAML}` }));
      assert.equal(huge.status, 413);
      const yaml = await t.request('/v1/runnables', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: FLOW_YAML });
      assert.equal(yaml.status, 415);
      const malformed = await t.request('/v1/runnables', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name": "x",' });
      assert.equal(malformed.status, 400);
      assert.equal(typeof ((await malformed.json()) as { error: unknown }).error, 'string');
    });

    it('answers 404 for ids that are not UUIDs, on every route', async () => {
      for (const [path, init] of [
        ['/v1/runnable/not-a-uuid', {}],
        ['/v1/runnable/not-a-uuid', json('PATCH', { name: 'x' })],
        ['/v1/runnable/not-a-uuid', { method: 'DELETE' }],
        ['/v1/runnable/not-a-uuid/versions', {}],
      ] as const) {
        assert.equal((await t.request(path, init)).status, 404, path);
      }
    });

    it('refuses wrongly typed patch fields with 400', async () => {
      const runnable = await create({ name: 'typed', config_content: FLOW_YAML });
      for (const [body, path] of [
        [{ name: 5 }, 'name'],
        [{ tags: [1] }, 'tags.0'],
        [{ config_content: ['x'] }, 'config_content'],
      ] as const) {
        const response = await t.request(`/v1/runnable/${runnable.id}`, json('PATCH', body));
        assert.equal(response.status, 400);
        const answer = (await response.json()) as { details: { path: string }[] };
        assert.equal(answer.details[0]?.path, path);
      }
    });

    it('needs a bearer token on every runnables route', async () => {
      for (const [path, method] of [
        ['/v1/runnables', 'GET'],
        ['/v1/runnables', 'POST'],
        [`/v1/runnable/${MISSING_ID}`, 'GET'],
        [`/v1/runnable/${MISSING_ID}`, 'PATCH'],
        [`/v1/runnable/${MISSING_ID}`, 'DELETE'],
        [`/v1/runnable/${MISSING_ID}/versions`, 'GET'],
      ] as const) {
        const response = await t.runloom.handle(new Request(`http://runloom.test${path}`, { method }));
        assert.equal(response.status, 401, `${method} ${path}`);
      }
    });
  });

  describe('enabled providers', () => {
    it("derives the provider from the account's only enabled provider", async () => {
      const response = await t.request(
        '/v1/llm-provider/groq',
        json('PUT', { enabled: true, credentials: { api_key: 'gsk-test' } }, 'acct-groq'),
      );
      assert.ok(response.status === 200 || response.status === 201, await response.clone().text());
      const created = await t.request('/v1/runnables', json('POST', { name: 'own', config_content: 'prompt: {system: hi}\nllms: [{model: my-own-model}]\n' }, 'acct-groq'));
      assert.equal(created.status, 201, await created.clone().text());
      const runnable = (await created.json()) as Record<string, any>;
      assert.deepEqual(runnable.config_content_parsed.llms, [{ model: 'my-own-model', provider: 'groq' }]);
    });

    it("lets each account's enabled providers decide for the same text, as they are when it is sent", async () => {
      const config = { name: 'same text', config_content: 'prompt: {system: hi}\nllms: [{model: shared-model}]\n' };
      const enable = async (provider: string, account: string): Promise<void> => {
        const response = await t.request(`/v1/llm-provider/${provider}`, json('PUT', { enabled: true, credentials: { api_key: 'key-test' } }, account));
        assert.ok(response.status === 200 || response.status === 201, await response.clone().text());
      };
      const providerFor = async (account: string): Promise<string> => {
        const response = await t.request('/v1/runnables', json('POST', config, account));
        if (response.status !== 201) return `${response.status} ${((await response.json()) as { error: string }).error}`;
        return ((await response.json()) as Record<string, any>).config_content_parsed.llms[0].provider;
      };
      await enable('groq', 'acct-shared-groq');
      await enable('mistral', 'acct-shared-mistral');
      assert.equal(await providerFor('acct-shared-groq'), 'groq');
      assert.equal(await providerFor('acct-shared-mistral'), 'mistral');
      assert.match(await providerFor('acct-shared-none'), /^400 invalid config_content: llms\.0\.provider: set provider/);
      await enable('groq', 'acct-shared-none');
      assert.equal(await providerFor('acct-shared-none'), 'groq');
    });
  });

  it('survives a restart: records and versions are in the durable store', async () => {
    const runnable = await create({ name: 'durable', config_content: FLOW_YAML });
    await t.request(`/v1/runnable/${runnable.id}`, json('PATCH', { config_content: AGENT_JSON }));
    await t.restart();
    const read = (await (await t.request(`/v1/runnable/${runnable.id}`)).json()) as Record<string, any>;
    assert.equal(read.config_content, AGENT_JSON);
    const versions = (await (await t.request(`/v1/runnable/${runnable.id}/versions`)).json()) as unknown[];
    assert.equal(versions.length, 2);
  });
});
