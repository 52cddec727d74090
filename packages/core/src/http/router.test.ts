import assert from 'node:assert/strict';
import { z } from 'zod';
import { ApiError } from './api-error';
import { route } from './route';
import { MAX_JSON_DEPTH } from './json-depth';
import { type RequestObserver, Router } from './router';

const seen: Parameters<RequestObserver['onRequest']>[0][] = [];

function makeRouter(overrides: { basePath?: string; rateLimit?: number } = {}): Router {
  const routes = [
    route({
      method: 'POST',
      path: '/v1/things',
      summary: 'create a thing',
      tag: 'test',
      body: { json: z.object({ name: z.string().max(10) }) },
      responses: { 201: { description: 'created' } },
      handle: async ({ body, principal }) => ({ status: 201, body: { name: body.name, account: principal.accountId } }),
    }),
    route({
      method: 'GET',
      path: '/v1/thing/{id}',
      summary: 'get a thing',
      tag: 'test',
      params: z.object({ id: z.uuid() }),
      query: z.object({ verbose: z.enum(['yes', 'no']).optional() }),
      responses: { 200: { description: 'found' } },
      handle: async ({ params, query }) => ({ status: 200, body: { id: params.id, verbose: query.verbose ?? null } }),
    }),
    route({
      method: 'GET',
      path: '/public',
      public: true,
      summary: 'public',
      tag: 'test',
      responses: { 200: { description: 'ok' } },
      handle: async () => ({ status: 200, body: { ok: true } }),
    }),
    route({
      method: 'GET',
      path: '/boom',
      public: true,
      summary: 'throws',
      tag: 'test',
      responses: { 200: { description: 'never' } },
      handle: async () => {
        throw new Error('secret internals at /srv/app.ts:12');
      },
    }),
  ];
  return new Router(routes, {
    basePath: overrides.basePath ?? '',
    jsonBodyLimitBytes: 1024,
    rateLimit: overrides.rateLimit ?? 0,
    authenticate: async (authorization) => {
      if (authorization !== 'Bearer good') throw new ApiError('UNAUTHORIZED', 'a valid bearer token is required');
      return { accountId: 'acct-a', clientId: 'client-a' };
    },
    observer: { onRequest: (entry) => seen.push(entry) },
  });
}

const auth = { authorization: 'Bearer good' };

function post(router: Router, body: string, headers: Record<string, string> = { 'content-type': 'application/json', ...auth }): Promise<Response> {
  return router.handle(new Request('http://runloom.test/v1/things', { method: 'POST', headers, body }));
}

describe('Router', () => {
  it('calls the handler with validated input and the principal', async () => {
    const response = await post(makeRouter(), JSON.stringify({ name: 'a', extra: 1 }));
    assert.equal(response.status, 201);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    assert.deepEqual(await response.json(), { name: 'a', account: 'acct-a' });
  });

  it('refuses a missing or wrong bearer with 401 and WWW-Authenticate', async () => {
    const response = await post(makeRouter(), '{}', { 'content-type': 'application/json' });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('www-authenticate'), 'Bearer');
    assert.equal(typeof (await response.json()).error, 'string');
  });

  it('answers 400 with details for wrong field types and missing fields', async () => {
    const response = await post(makeRouter(), JSON.stringify({ name: 5 }));
    assert.equal(response.status, 400);
    const body = await response.json();
    assert.equal(body.details[0].path, 'name');
    assert.match(body.error, /name/);
  });

  it('answers 400 for malformed JSON and for JSON nested deeper than the limit', async () => {
    assert.equal((await post(makeRouter(), '{"name": ')).status, 400);
    const deep = `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`;
    const response = await post(makeRouter(), deep);
    assert.equal(response.status, 400);
    assert.match((await response.json()).error, /nested at most 64 levels/);
  });

  it('answers 413 past the JSON body limit and 415 for another media type', async () => {
    assert.equal((await post(makeRouter(), JSON.stringify({ name: 'x'.repeat(2000) }))).status, 413);
    const response = await post(makeRouter(), 'name=a', { 'content-type': 'text/plain', ...auth });
    assert.equal(response.status, 415);
  });

  it('answers 404 for an unknown path and for a path id that is not a UUID, 405 with Allow for a wrong method', async () => {
    const router = makeRouter();
    assert.equal((await router.handle(new Request('http://runloom.test/nowhere'))).status, 404);
    const notUuid = await router.handle(new Request('http://runloom.test/v1/thing/abc', { headers: auth }));
    assert.equal(notUuid.status, 404);
    const wrongMethod = await router.handle(new Request('http://runloom.test/v1/things', { headers: auth }));
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'POST');
  });

  it('answers 400 for an invalid enum in the query', async () => {
    const id = '0190a1b2-0000-7000-8000-000000000000';
    const router = makeRouter();
    const ok = await router.handle(new Request(`http://runloom.test/v1/thing/${id}?verbose=yes`, { headers: auth }));
    assert.deepEqual(await ok.json(), { id, verbose: 'yes' });
    const bad = await router.handle(new Request(`http://runloom.test/v1/thing/${id}?verbose=maybe`, { headers: auth }));
    assert.equal(bad.status, 400);
  });

  it('serves every route under the base path and nothing outside it', async () => {
    const router = makeRouter({ basePath: '/api' });
    assert.equal((await router.handle(new Request('http://runloom.test/api/public'))).status, 200);
    assert.equal((await router.handle(new Request('http://runloom.test/public'))).status, 404);
  });

  it('rate-limits per account with 429 and Retry-After', async () => {
    const router = makeRouter({ rateLimit: 1 });
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 3; i++) {
      const response = await post(router, JSON.stringify({ name: 'a' }));
      statuses.push(response.status);
      retryAfter ??= response.headers.get('retry-after');
    }
    assert.deepEqual(statuses, [201, 201, 429]);
    assert.equal(retryAfter, '1');
  });

  it('echoes a sane X-Request-Id, generates one otherwise, and reports each request', async () => {
    const router = makeRouter();
    const echoed = await router.handle(new Request('http://runloom.test/public', { headers: { 'x-request-id': 'req-42' } }));
    assert.equal(echoed.headers.get('x-request-id'), 'req-42');
    const generated = await router.handle(new Request('http://runloom.test/public', { headers: { 'x-request-id': 'bad id\n' } }));
    assert.match(generated.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(seen.at(-1)?.route, 'GET /public');
  });

  it('turns an unexpected failure into a 500 without internals', async () => {
    const response = await makeRouter().handle(new Request('http://runloom.test/boom'));
    assert.equal(response.status, 500);
    const text = await response.text();
    assert.doesNotMatch(text, /secret internals|\.ts:/);
    assert.ok(seen.at(-1)?.error instanceof Error);
  });
});
