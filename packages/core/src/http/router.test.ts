import assert from 'node:assert/strict';
import * as z from 'zod';
import { ApiError } from './api-error';
import { route } from './route';
import { jsonResponse } from './http-result';
import { MAX_JSON_DEPTH } from '../domain/input/json-depth';
import { type RequestObserver, Router, type RouterOptions } from './router';
import { openSseStream, sseBodyOf } from './sse';
import { ManualClock } from '../testing/manual-clock';

const seen: Parameters<RequestObserver['onRequest']>[0][] = [];
/** Whether the streamed /file body was cancelled, and how many chunks of it were produced. */
const fileStream = { cancelled: false, produced: 0 };

/** Router options for route tables made in a test: every request is account acct-a's, nothing is observed. */
const ONE_ACCOUNT: RouterOptions = {
  basePath: '',
  jsonBodyLimitBytes: 1024,
  rateLimit: 0,
  authenticate: async () => ({ accountId: 'acct-a', clientId: 'client-a' }),
  observer: { onRequest: () => undefined },
};

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
      path: '/file',
      public: true,
      summary: 'a streamed file',
      tag: 'test',
      responses: { 200: { description: 'bytes', contentType: 'application/octet-stream' } },
      handle: async () => {
        fileStream.cancelled = false;
        fileStream.produced = 0;
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            fileStream.produced += 1;
            controller.enqueue(new Uint8Array(4).fill(fileStream.produced));
            if (fileStream.produced === 3) controller.close();
          },
          cancel() {
            fileStream.cancelled = true;
          },
        }, { highWaterMark: 0 });
        return new Response(body, { headers: { 'content-type': 'application/octet-stream', 'content-length': '12', etag: '"abc"' } });
      },
    }),
    route({
      method: 'GET',
      path: '/made',
      public: true,
      summary: 'a JSON response built by jsonResponse',
      tag: 'test',
      responses: { 200: { description: 'ok' } },
      handle: async () => jsonResponse(200, { text: 'ü' }, { 'cache-control': 'no-store' }),
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

  it('reads a raw request URL as URL parsing does: dot segments, percent-encoding, spaces, a fragment', async () => {
    const id = '0190a1b2-0000-7000-8000-000000000000';
    const router = makeRouter();
    // As a server adapter hands it over: the request target as the client sent it, not normalised.
    const dispatch = (target: string) =>
      router.dispatch({
        method: 'GET',
        url: `http://runloom.test${target}`,
        hasBody: false,
        remoteAddress: undefined,
        header: (name) => (name === 'authorization' ? auth.authorization : null),
        readText: async () => '',
        body: () => null,
        request: () => new Request(`http://runloom.test${target}`),
        signal: () => new AbortController().signal,
      });
    const answered = async (target: string) => {
      const answer = await dispatch(target);
      return answer instanceof Response ? answer.status : [answer.status, answer.text && JSON.parse(answer.text)];
    };
    assert.deepEqual(await answered(`/v1/thing/${id}?verbose=yes`), [200, { id, verbose: 'yes' }]);
    assert.deepEqual(await answered(`/v1/other/../thing/${id}?verbose=%79es`), [200, { id, verbose: 'yes' }]);
    assert.deepEqual(await answered(`/v1/./thing/%2e%2E/thing/${id}?verbose=yes#fragment`), [200, { id, verbose: 'yes' }]);
    assert.deepEqual(await answered(`/v1\\thing/${id}?verbose=no`), [200, { id, verbose: 'no' }]);
    assert.deepEqual(await answered(`/v1/thing/${id}?verbose=n%6F&verbose2=a b`), [200, { id, verbose: 'no' }]);
    assert.equal(((await answered(`/v1/thing/${id}?verbose=y es`)) as unknown[])[0], 400);
    assert.equal(((await answered('/v1/th ing')) as unknown[])[0], 404);
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

  it('sets X-Content-Type-Options: nosniff on every answer, success or error, JSON or stream', async () => {
    const router = makeRouter();
    const id = '0190a1b2-0000-7000-8000-000000000000';
    const requests: [string, Request][] = [
      ['201', new Request('http://runloom.test/v1/things', { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: '{"name":"a"}' })],
      ['200', new Request(`http://runloom.test/v1/thing/${id}`, { headers: auth })],
      ['stream', new Request('http://runloom.test/file')],
      ['made', new Request('http://runloom.test/made')],
      ['HEAD', new Request('http://runloom.test/public', { method: 'HEAD' })],
      ['400', new Request('http://runloom.test/v1/things', { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: '{' })],
      ['401', new Request('http://runloom.test/v1/things', { method: 'POST' })],
      ['404', new Request('http://runloom.test/nowhere')],
      ['405', new Request('http://runloom.test/public', { method: 'DELETE' })],
      ['413', new Request('http://runloom.test/v1/things', { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: 'x'.repeat(2000) })],
      ['415', new Request('http://runloom.test/v1/things', { method: 'POST', headers: { 'content-type': 'text/plain', ...auth }, body: 'a' })],
      ['500', new Request('http://runloom.test/boom')],
    ];
    const missing: string[] = [];
    for (const [label, request] of requests) {
      const response = await router.handle(request);
      if (response.headers.get('x-content-type-options') !== 'nosniff') missing.push(`${label} → ${response.status}`);
      await response.body?.cancel();
    }
    assert.deepEqual(missing, []);
  });

  it('answers HEAD on every GET route like GET, without the body: same status and headers, Content-Length included', async () => {
    const router = makeRouter();
    const id = '0190a1b2-0000-7000-8000-000000000000';
    const getRoutes = router.routes.filter((definition) => definition.method === 'GET');
    assert.ok(getRoutes.length >= 4);
    for (const definition of getRoutes) {
      const path = definition.path.replace('{id}', id);
      const get = await router.handle(new Request(`http://runloom.test${path}`, { headers: auth }));
      const getBody = new Uint8Array(await get.arrayBuffer());
      const head = await router.handle(new Request(`http://runloom.test${path}`, { method: 'HEAD', headers: auth }));
      assert.equal(head.status, get.status, path);
      const headers = (response: Response): Record<string, string> => {
        const all = headerRecord(response.headers);
        delete all['x-request-id'];
        return all;
      };
      const expected = headers(get);
      expected['content-length'] ??= String(getBody.byteLength);
      assert.deepEqual(headers(head), expected, path);
      assert.equal(head.body, null, path);
      if (definition.path === '/file') assert.ok(fileStream.cancelled && fileStream.produced <= 1, 'the streamed body is cancelled, not read');
    }
    assert.equal(seen.at(-1)?.route, 'HEAD /boom');
  });

  it('hands a stream body and the headers to the handler from the exchange, without building its web Request', async () => {
    const router = new Router(
      [
        route({
          method: 'PUT',
          path: '/bytes',
          public: true,
          summary: 'raw bytes',
          tag: 'test',
          body: { stream: { mediaTypes: ['*/*'], description: 'bytes' } },
          responses: { 200: { description: 'their length' } },
          handle: async ({ body, header }) => {
            const bytes = await new Response(body as ReadableStream<Uint8Array>).arrayBuffer();
            return { status: 200, body: { length: bytes.byteLength, declared: header('content-length') } };
          },
        }),
      ],
      ONE_ACCOUNT,
    );
    const headers: Record<string, string> = { 'content-type': 'application/octet-stream', 'content-length': '3' };
    const answer = await router.dispatch({
      method: 'PUT',
      url: 'http://runloom.test/bytes',
      hasBody: true,
      remoteAddress: undefined,
      header: (name) => headers[name] ?? null,
      readText: async () => assert.fail('a stream body is not read as text'),
      body: () => new Response(new Uint8Array([1, 2, 3])).body,
      request: () => assert.fail('no web Request is built'),
      signal: () => new AbortController().signal,
    });
    assert.ok(!(answer instanceof Response));
    assert.deepEqual([answer.status, JSON.parse(answer.text!)], [200, { length: 3, declared: '3' }]);
  });

  it('counts an event stream open until it is done, keeping its own body for a server adapter to attach to', async () => {
    const router = new Router(
      [
        route({
          method: 'GET',
          path: '/events',
          public: true,
          summary: 'an event stream',
          tag: 'test',
          responses: { 200: { description: 'events', contentType: 'text/event-stream' } },
          handle: async () => openSseStream({ clock: new ManualClock() }).response,
        }),
      ],
      ONE_ACCOUNT,
    );
    const read = await router.handle(new Request('http://runloom.test/events'));
    const attached = await router.handle(new Request('http://runloom.test/events'));
    assert.equal(router.openStreams, 2);
    await read.body!.cancel();
    assert.equal(router.openStreams, 1);
    const body = sseBodyOf(attached);
    assert.ok(body, 'the route’s own stream, not one wrapped around it');
    const written: string[] = [];
    const delivery = body.attach({ write: (bytes) => written.push(new TextDecoder().decode(bytes)) > 0, end: () => undefined, destroy: () => undefined });
    assert.deepEqual(written, ['retry: 1000\n\n']);
    delivery.cancel();
    assert.equal(router.openStreams, 0);
  });

  it('lists HEAD beside GET in Allow, and answers HEAD on a path without GET with 405', async () => {
    const router = makeRouter();
    const wrong = await router.handle(new Request('http://runloom.test/public', { method: 'POST' }));
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'GET, HEAD');
    const head = await router.handle(new Request('http://runloom.test/v1/things', { method: 'HEAD', headers: auth }));
    assert.equal(head.status, 405);
    assert.equal(head.headers.get('allow'), 'POST');
  });

  it('refuses a route table with a method and path twice, whatever its parameters are named, when it is made', () => {
    const thing = (path: string) =>
      route({ method: 'GET', path, summary: 'a thing', tag: 'test', responses: { 200: { description: 'ok' } }, handle: async () => ({ status: 200, body: {} }) });
    assert.throws(() => new Router([thing('/v1/thing/{id}'), thing('/v1/thing/{name}')], ONE_ACCOUNT), /duplicate route GET \/v1\/thing\/\{name\}/);
    assert.doesNotThrow(() => new Router([thing('/v1/thing/{id}'), thing('/v1/thing/mine')], ONE_ACCOUNT));
  });
});

function headerRecord(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}
