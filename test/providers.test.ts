import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Database, PROVIDER_NAMES, ProviderUnavailableError } from '../packages/core/src/index';
import { startTestRunloom, type TestRunloom } from './support/harness';

const OPENAI_KEY = 'sk-test-openai-0123456789abcd';

function put(app: TestRunloom, provider: string, body: unknown, account?: string): Promise<Response> {
  return app.request(`/v1/llm-provider/${provider}`, {
    method: 'PUT',
    account,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function list(app: TestRunloom, account?: string): Promise<{ provider: string; enabled: boolean; credentials: Record<string, string> }[]> {
  const response = await app.request('/v1/llm-providers', { account });
  assert.equal(response.status, 200);
  return ((await response.json()) as { data: { provider: string; enabled: boolean; credentials: Record<string, string> }[] }).data;
}

/** Every file under `dir`, as text: what an attacker with the data dir would read. */
function readTree(dir: string): string {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => fs.readFileSync(path.join(entry.parentPath, entry.name)).toString('latin1'))
    .join('\n');
}

describe('LLM provider configurations (HTTP)', () => {
  // One instance for the file (tokens are slow to mint); each test starts with no configurations.
  let app: TestRunloom;

  before(async () => {
    app = await startTestRunloom();
  });

  after(async () => {
    await app.close();
  });

  beforeEach(async () => {
    for (const account of ['acct-a', 'acct-b']) {
      for (const provider of PROVIDER_NAMES) await app.runloom.providers.delete(account, provider);
    }
  });

  it('lists nothing before any provider is configured, wrapped in data', async () => {
    const response = await app.request('/v1/llm-providers');
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { data: [] });
  });

  it('creates with 201, replaces with 200, and answers the masked record each time', async () => {
    const created = await put(app, 'openai', { enabled: true, credentials: { api_key: OPENAI_KEY } });
    assert.equal(created.status, 201);
    const first = (await created.json()) as Record<string, unknown>;
    assert.equal(first.provider, 'openai');
    assert.equal(first.enabled, true);
    assert.deepEqual(first.credentials, { api_key: '****abcd' });
    assert.match(String(first.created_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

    const replaced = await put(app, 'openai', { enabled: false, credentials: { api_key: 'sk-other-key-wxyz' } });
    assert.equal(replaced.status, 200);
    const second = (await replaced.json()) as Record<string, unknown>;
    assert.equal(second.enabled, false);
    assert.deepEqual(second.credentials, { api_key: '****wxyz' });
    assert.equal(second.created_at, first.created_at);
    assert.ok(String(second.updated_at) >= String(first.updated_at));

    assert.deepEqual(
      (await list(app)).map(({ provider, enabled, credentials }) => ({ provider, enabled, credentials })),
      [{ provider: 'openai', enabled: false, credentials: { api_key: '****wxyz' } }],
    );
  });

  it('lists in the order openai, anthropic, google, azure-openai, mistral, aws-bedrock, groq', async () => {
    const credentialsOf: Record<string, Record<string, string>> = {
      'azure-openai': { api_key: 'azure-key-1234', resource_name: 'my-resource' },
      'aws-bedrock': { region: 'us-east-1', api_key: 'bedrock-key-1234' },
    };
    for (const provider of [...PROVIDER_NAMES].reverse()) {
      const response = await put(app, provider, { enabled: true, credentials: credentialsOf[provider] ?? { api_key: `key-for-${provider}` } });
      assert.equal(response.status, 201, provider);
    }
    assert.deepEqual(
      (await list(app)).map((entry) => entry.provider),
      ['openai', 'anthropic', 'google', 'azure-openai', 'mistral', 'aws-bedrock', 'groq'],
    );
  });

  it('masks every secret to its last 4 characters and shows the other fields as they are', async () => {
    assert.equal(
      (
        await put(app, 'azure-openai', {
          enabled: true,
          credentials: { api_key: 'azure-secret-9876', resource_name: 'contoso', api_version: '2024-10-21', base_url: 'https://proxy.example.com/openai' },
        })
      ).status,
      201,
    );
    assert.equal(
      (
        await put(app, 'aws-bedrock', {
          enabled: true,
          credentials: { region: 'eu-west-3', access_key_id: 'AKIAEXAMPLEKEY42', secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCY', session_token: 'FwoGZXIvYXdzEtoken7777' },
        })
      ).status,
      201,
    );
    assert.equal((await put(app, 'groq', { enabled: true, credentials: { api_key: 'gsk_abc' } })).status, 201);
    const [azure, bedrock, groq] = await list(app);
    assert.deepEqual(azure!.credentials, {
      api_key: '****9876',
      resource_name: 'contoso',
      api_version: '2024-10-21',
      base_url: 'https://proxy.example.com/openai',
    });
    assert.deepEqual(bedrock!.credentials, {
      region: 'eu-west-3',
      access_key_id: '****EY42',
      secret_access_key: '****fiCY',
      session_token: '****7777',
    });
    assert.deepEqual(groq!.credentials, { api_key: '****_abc' });
  });

  it('stores credentials only encrypted: neither the documents nor the data dir hold a secret', async () => {
    // Its own instance, since it restarts; the service API needs no token.
    const own = await startTestRunloom();
    try {
      const secrets = [OPENAI_KEY, 'wJalrXUtnFEMI/K7MDENG/bPxRfiCY'];
      await own.runloom.providers.put('acct-a', 'openai', { enabled: true, credentials: { api_key: OPENAI_KEY } });
      await own.runloom.providers.put('acct-a', 'aws-bedrock', {
        enabled: true,
        credentials: { region: 'us-west-2', access_key_id: 'AKIAEXAMPLE00000', secret_access_key: secrets[1] },
      });
      const stored = JSON.stringify(await own.runloom.container.get<Database>(Database).find('llm_providers'));
      assert.match(stored, /sealed_credentials/);
      await own.restart();
      const onDisk = readTree(own.dataDir);
      for (const secret of secrets) {
        assert.ok(!stored.includes(secret), 'a stored document holds a plaintext secret');
        assert.ok(!onDisk.includes(secret), 'a file in the data dir holds a plaintext secret');
      }
      // Still readable after the restart: the key lives with the data.
      assert.equal((await own.runloom.providers.getCredentials('acct-a', 'openai')).api_key, OPENAI_KEY);
    } finally {
      await own.close();
    }
  });

  it('hands model calls the plaintext credentials, and names the provider when it cannot be used', async () => {
    await put(app, 'anthropic', { enabled: true, credentials: { api_key: 'sk-ant-secret', base_url: 'http://93.184.215.14:9999/v1' } });
    await put(app, 'mistral', { enabled: false, credentials: {} });
    const providers = app.runloom.providers;
    assert.deepEqual(await providers.getCredentials('acct-a', 'anthropic'), { api_key: 'sk-ant-secret', base_url: 'http://93.184.215.14:9999/v1' });
    await assert.rejects(providers.getCredentials('acct-a', 'mistral'), (error: unknown) => {
      assert.ok(error instanceof ProviderUnavailableError);
      assert.match(error.message, /provider mistral is disabled/);
      return true;
    });
    await assert.rejects(providers.getCredentials('acct-a', 'google'), /provider google is not configured/);
    await assert.rejects(providers.getCredentials('acct-b', 'anthropic'), /provider anthropic is not configured/);
    assert.deepEqual(await providers.enabledProviders('acct-a'), ['anthropic']);
    await put(app, 'openai', { enabled: true, credentials: { api_key: OPENAI_KEY } });
    assert.deepEqual(await providers.enabledProviders('acct-a'), ['openai', 'anthropic']);
  });

  it('hands each call the credentials of the latest replace, each call a copy of its own', async () => {
    const providers = app.runloom.providers;
    await put(app, 'openai', { enabled: true, credentials: { api_key: OPENAI_KEY } });
    const first = await providers.getCredentials('acct-a', 'openai');
    first.api_key = 'changed by a caller';
    assert.equal((await providers.getCredentials('acct-a', 'openai')).api_key, OPENAI_KEY);
    await put(app, 'openai', { enabled: true, credentials: { api_key: 'sk-replaced-0123456789' } });
    assert.equal((await providers.getCredentials('acct-a', 'openai')).api_key, 'sk-replaced-0123456789');
    await put(app, 'openai', { enabled: true, credentials: { api_key: OPENAI_KEY } });
    assert.equal((await providers.getCredentials('acct-a', 'openai')).api_key, OPENAI_KEY);
  });

  it('hands each call the settings of the latest write: limits, a disable and a delete show at the next call', async () => {
    const providers = app.runloom.providers;
    await put(app, 'openai', { enabled: true, credentials: { api_key: OPENAI_KEY } });
    assert.deepEqual((await providers.getCallSettings('acct-a', 'openai')).limits, { max_concurrency: null, requests_per_minute: null });
    await put(app, 'openai', { enabled: true, credentials: { api_key: OPENAI_KEY }, max_concurrency: 3, requests_per_minute: 60 });
    assert.deepEqual((await providers.getCallSettings('acct-a', 'openai')).limits, { max_concurrency: 3, requests_per_minute: 60 });
    await put(app, 'openai', { enabled: false, credentials: { api_key: OPENAI_KEY } });
    await assert.rejects(providers.getCallSettings('acct-a', 'openai'), /provider openai is disabled/);
    await put(app, 'openai', { enabled: true, credentials: { api_key: OPENAI_KEY } });
    assert.equal((await providers.getCallSettings('acct-a', 'openai')).credentials.api_key, OPENAI_KEY);
    assert.equal((await app.request('/v1/llm-provider/openai', { method: 'DELETE' })).status, 200);
    await assert.rejects(providers.getCallSettings('acct-a', 'openai'), /provider openai is not configured/);
  });

  describe('validation', () => {
    const cases: { name: string; provider: string; body: unknown; path: string; message: RegExp }[] = [
      { name: 'api_key missing', provider: 'openai', body: { enabled: true, credentials: {} }, path: 'credentials.api_key', message: /api_key is required/ },
      { name: 'api_key not a string', provider: 'google', body: { enabled: true, credentials: { api_key: 42 } }, path: 'credentials.api_key', message: /api_key must be a string/ },
      { name: 'api_key blank', provider: 'groq', body: { enabled: true, credentials: { api_key: '   ' } }, path: 'credentials.api_key', message: /must not be empty/ },
      {
        name: 'base_url not http(s)',
        provider: 'mistral',
        body: { enabled: true, credentials: { api_key: 'k-1234', base_url: 'ftp://files.example.com' } },
        path: 'credentials.base_url',
        message: /base_url must be an http\(s\) URL/,
      },
      {
        name: 'azure without resource_name or base_url',
        provider: 'azure-openai',
        body: { enabled: true, credentials: { api_key: 'k-1234' } },
        path: 'credentials.resource_name',
        message: /resource_name or base_url/,
      },
      {
        name: 'bedrock without region',
        provider: 'aws-bedrock',
        body: { enabled: true, credentials: { api_key: 'k-1234' } },
        path: 'credentials.region',
        message: /region is required/,
      },
      {
        name: 'bedrock with a malformed region',
        provider: 'aws-bedrock',
        body: { enabled: true, credentials: { region: 'Mars', api_key: 'k-1234' } },
        path: 'credentials.region',
        message: /AWS region/,
      },
      {
        name: 'bedrock with no way to sign in',
        provider: 'aws-bedrock',
        body: { enabled: true, credentials: { region: 'us-east-1' } },
        path: 'credentials.access_key_id',
        message: /access_key_id and secret_access_key .* or api_key/,
      },
      {
        name: 'bedrock with half an access key pair',
        provider: 'aws-bedrock',
        body: { enabled: true, credentials: { region: 'us-east-1', access_key_id: 'AKIA0000' } },
        path: 'credentials.secret_access_key',
        message: /secret_access_key is required/,
      },
      {
        name: 'bedrock with both an api_key and access keys',
        provider: 'aws-bedrock',
        body: { enabled: true, credentials: { region: 'us-east-1', api_key: 'k', access_key_id: 'a', secret_access_key: 's' } },
        path: 'credentials.api_key',
        message: /either api_key or access keys/,
      },
      {
        name: 'a secret longer than 8192 characters',
        provider: 'openai',
        body: { enabled: true, credentials: { api_key: 'k'.repeat(8193) } },
        path: 'credentials.api_key',
        message: /at most 8192/,
      },
      { name: 'enabled missing', provider: 'openai', body: { credentials: { api_key: 'k-1234' } }, path: 'enabled', message: /boolean/ },
      { name: 'enabled not a boolean', provider: 'openai', body: { enabled: 'yes', credentials: { api_key: 'k-1234' } }, path: 'enabled', message: /boolean/ },
      { name: 'credentials not an object', provider: 'openai', body: { enabled: true, credentials: ['k-1234'] }, path: 'credentials', message: /record|object/ },
      { name: 'body not an object', provider: 'openai', body: [1, 2], path: '', message: /object/ },
    ];
    for (const { name, provider, body, path: detailPath, message } of cases) {
      it(`refuses ${name} with 400 naming the field`, async () => {
        const response = await put(app, provider, body);
        assert.equal(response.status, 400);
        const error = (await response.json()) as { error: string; details: { path: string; message: string }[] };
        assert.equal(typeof error.error, 'string');
        const detail = error.details.find((entry) => entry.path === detailPath);
        assert.ok(detail, `no detail for ${detailPath}: ${JSON.stringify(error)}`);
        assert.match(detail.message, message);
        assert.deepEqual(await list(app), [], 'nothing was stored');
      });
    }

    it('never echoes a rejected secret back in the error', async () => {
      const response = await put(app, 'aws-bedrock', { enabled: true, credentials: { region: 'nowhere', api_key: 'sk-do-not-echo-me' } });
      assert.equal(response.status, 400);
      assert.ok(!(await response.text()).includes('sk-do-not-echo-me'));
    });

    it('accepts a disabled entry holding {} or partial credentials, still checking field types', async () => {
      const empty = await put(app, 'google', { enabled: false, credentials: {} });
      assert.equal(empty.status, 201);
      assert.deepEqual(((await empty.json()) as { credentials: unknown }).credentials, {});
      assert.equal((await put(app, 'aws-bedrock', { enabled: false, credentials: { region: 'us-east-1' } })).status, 201);
      assert.equal((await put(app, 'groq', { enabled: false })).status, 201, 'credentials default to {}');
      const wrongType = await put(app, 'openai', { enabled: false, credentials: { api_key: 7 } });
      assert.equal(wrongType.status, 400);
      assert.deepEqual(
        (await list(app)).map((entry) => [entry.provider, entry.enabled]),
        [
          ['google', false],
          ['aws-bedrock', false],
          ['groq', false],
        ],
      );
    });

    const accepted: Array<[string, Record<string, unknown>, RegExp]> = [
      ['openai', { api_key: OPENAI_KEY, apiKey: 'x' }, /openai credentials are \{api_key, base_url\?\}/],
      ['groq', { api_key: 'gsk-1234', organization: 'o' }, /groq credentials are \{api_key, base_url\?\}/],
      ['azure-openai', { api_key: 'k-1234', resource_name: 'r', deployment: 'd' }, /azure-openai credentials are \{api_key, resource_name \| base_url, api_version\?\}/],
      [
        'aws-bedrock',
        { region: 'us-east-1', api_key: 'k-1234', profile: 'p' },
        /aws-bedrock credentials are \{region, access_key_id, secret_access_key, session_token\?, base_url\?\} or \{region, api_key, base_url\?\}/,
      ],
    ];
    for (const [provider, credentials, message] of accepted) {
      it(`refuses an unknown ${provider} credential field with 400 naming the fields ${provider} takes`, async () => {
        const unknown = Object.keys(credentials).at(-1)!;
        const response = await put(app, provider, { enabled: true, credentials });
        assert.equal(response.status, 400);
        const error = (await response.json()) as { error: string; details: { path: string; message: string }[] };
        assert.match(error.error, new RegExp(`^invalid ${provider} credentials: credentials\\.${unknown}: unknown field; `));
        assert.match(error.error, message);
        assert.deepEqual(error.details.map((detail) => detail.path), [`credentials.${unknown}`]);
        assert.match(error.details[0]!.message, message);
        assert.deepEqual(await list(app), [], 'nothing was stored');
      });
    }

    it('names the accepted fields for a field of the wrong type too, without echoing any value', async () => {
      const response = await put(app, 'openai', { enabled: true, credentials: { api_key: 42, password: 'hunter2-secret' } });
      assert.equal(response.status, 400);
      const text = await response.text();
      assert.match(text, /api_key must be a string/);
      assert.match(text, /openai credentials are \{api_key, base_url\?\}/);
      assert.ok(!text.includes('hunter2'));
    });

    it('refuses unknown fields in a disabled entry too, which may otherwise hold {}', async () => {
      const response = await put(app, 'mistral', { enabled: false, credentials: { token: 't' } });
      assert.equal(response.status, 400);
      assert.match(((await response.json()) as { error: string }).error, /credentials\.token: unknown field; mistral credentials are/);
    });

    it('refuses a base_url beside credentials with 400 saying it belongs inside them', async () => {
      const response = await put(app, 'openai', { enabled: true, base_url: 'http://127.0.0.1:9999/v1', credentials: { api_key: OPENAI_KEY } });
      assert.equal(response.status, 400);
      const error = (await response.json()) as { error: string; details: { path: string; message: string }[] };
      assert.match(error.error, /^base_url belongs inside credentials: \{"enabled": true, "credentials": \{"base_url": …\}\}/);
      assert.deepEqual(error.details, [{ path: 'base_url', message: 'base_url belongs inside credentials' }]);
      const keyOutside = await put(app, 'groq', { enabled: true, api_key: 'gsk-do-not-echo' });
      assert.equal(keyOutside.status, 400);
      const text = await keyOutside.text();
      assert.match(text, /api_key belongs inside credentials/);
      assert.ok(!text.includes('gsk-do-not-echo'));
      await assert.rejects(
        app.runloom.providers.put('acct-a', 'openai', { enabled: true, credentials: { api_key: OPENAI_KEY }, base_url: 'https://x.example' } as never),
        /base_url belongs inside credentials/,
      );
      assert.deepEqual(await list(app), [], 'nothing was stored');
    });

    it('ignores other fields beside enabled and credentials', async () => {
      const response = await put(app, 'openai', { enabled: true, credentials: { api_key: OPENAI_KEY }, extra: 1 });
      assert.equal(response.status, 201);
      assert.deepEqual(await app.runloom.providers.getCredentials('acct-a', 'openai'), { api_key: OPENAI_KEY });
    });

    it('refuses a body over the JSON limit with 413, malformed JSON with 400 and another media type with 415', async () => {
      const huge = await put(app, 'openai', { enabled: true, credentials: { api_key: 'k'.repeat(2 * 1024 * 1024) } });
      assert.equal(huge.status, 413);
      const malformed = await app.request('/v1/llm-provider/openai', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"enabled":' });
      assert.equal(malformed.status, 400);
      const text = await app.request('/v1/llm-provider/openai', { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'enabled' });
      assert.equal(text.status, 415);
    });
  });

  describe('limits for runs', () => {
    it('stores max_concurrency and requests_per_minute, answers them, and replaces them on the next PUT', async () => {
      const created = await put(app, 'groq', { enabled: true, credentials: { api_key: 'gsk-limit-1234' }, max_concurrency: 4, requests_per_minute: 600 });
      assert.equal(created.status, 201);
      const body = (await created.json()) as Record<string, unknown>;
      assert.deepEqual([body.max_concurrency, body.requests_per_minute], [4, 600]);
      const listed = (await list(app)).find((entry) => entry.provider === 'groq') as unknown as Record<string, unknown>;
      assert.deepEqual([listed.max_concurrency, listed.requests_per_minute], [4, 600]);
      const replaced = (await (await put(app, 'groq', { enabled: true, credentials: { api_key: 'gsk-limit-1234' } })).json()) as Record<string, unknown>;
      assert.deepEqual([replaced.max_concurrency, replaced.requests_per_minute], [null, null]);
    });

    for (const [field, value] of [
      ['max_concurrency', 0],
      ['max_concurrency', 1.5],
      ['max_concurrency', '4'],
      ['requests_per_minute', -1],
      ['requests_per_minute', 100_000_000],
    ] as const) {
      it(`refuses ${field} = ${JSON.stringify(value)} with 400 naming the field`, async () => {
        const response = await put(app, 'groq', { enabled: true, credentials: { api_key: 'gsk-limit-1234' }, [field]: value });
        assert.equal(response.status, 400);
        const body = (await response.json()) as { details: { path: string }[] };
        assert.ok(body.details.some((detail) => detail.path.includes(field)), JSON.stringify(body));
      });
    }
  });

  describe('provider names', () => {
    for (const name of ['openai2', 'OpenAI', 'azure_openai', 'bedrock', '%00', 'x'.repeat(300)]) {
      it(`answers 400 listing the seven names for PUT and DELETE of '${name.slice(0, 20)}'`, async () => {
        const encoded = encodeURIComponent(name);
        for (const response of [
          await put(app, encoded, { enabled: true, credentials: { api_key: 'k-1234' } }),
          await app.request(`/v1/llm-provider/${encoded}`, { method: 'DELETE' }),
        ]) {
          assert.equal(response.status, 400);
          const body = (await response.json()) as { error: string };
          assert.match(body.error, /unknown provider .*openai, anthropic, google, azure-openai, mistral, aws-bedrock, groq/);
        }
      });
    }
  });

  describe('DELETE /v1/llm-provider/{provider}', () => {
    it('deletes a configuration and answers {provider}', async () => {
      await put(app, 'openai', { enabled: true, credentials: { api_key: OPENAI_KEY } });
      await put(app, 'groq', { enabled: true, credentials: { api_key: 'gsk-1234' } });
      const response = await app.request('/v1/llm-provider/openai', { method: 'DELETE' });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { provider: 'openai' });
      assert.deepEqual(
        (await list(app)).map((entry) => entry.provider),
        ['groq'],
      );
      await assert.rejects(app.runloom.providers.getCredentials('acct-a', 'openai'), /not configured/);
    });

    it('answers 404 {error: {code: NOT_FOUND, message}} when the provider has no configuration', async () => {
      const response = await app.request('/v1/llm-provider/aws-bedrock', { method: 'DELETE' });
      assert.equal(response.status, 404);
      const body = (await response.json()) as { error: { code: string; message: string } };
      assert.deepEqual(Object.keys(body), ['error']);
      assert.equal(body.error.code, 'NOT_FOUND');
      assert.match(body.error.message, /aws-bedrock/);
    });
  });

  describe('account isolation', () => {
    it('keeps each account’s configurations to itself on every route', async () => {
      await put(app, 'openai', { enabled: true, credentials: { api_key: OPENAI_KEY } });
      assert.deepEqual(await list(app, 'acct-b'), []);
      const deleteOther = await app.request('/v1/llm-provider/openai', { method: 'DELETE', account: 'acct-b' });
      assert.equal(deleteOther.status, 404);
      assert.equal(((await deleteOther.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');

      // The same provider configured by another account is a separate record.
      assert.equal((await put(app, 'openai', { enabled: false, credentials: {} }, 'acct-b')).status, 201);
      const [mine] = await list(app);
      assert.deepEqual([mine!.enabled, mine!.credentials], [true, { api_key: '****abcd' }]);
      assert.equal((await app.runloom.providers.getCredentials('acct-a', 'openai')).api_key, OPENAI_KEY);
    });
  });

  it('needs a bearer token on every provider route', async () => {
    for (const [method, route] of [
      ['GET', '/v1/llm-providers'],
      ['PUT', '/v1/llm-provider/openai'],
      ['DELETE', '/v1/llm-provider/openai'],
    ] as const) {
      const response = await app.runloom.handle(new Request(`http://runloom.test${route}`, { method }));
      assert.equal(response.status, 401, `${method} ${route}`);
    }
  });

  it('documents every provider route in the OpenAPI document', async () => {
    const document = (await (await app.request('/v1/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
    assert.ok(document.paths['/v1/llm-providers']?.get);
    assert.ok(document.paths['/v1/llm-provider/{provider}']?.put);
    assert.ok(document.paths['/v1/llm-provider/{provider}']?.delete);
  });
});
