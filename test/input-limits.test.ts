import assert from 'node:assert/strict';
import http, { type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { MAX_JSON_DEPTH, TOO_DEEP_MESSAGE } from '../packages/core/src/domain/input/json-depth';
import { MAX_QUERY_PARAMETER_LENGTH, MAX_QUERY_PARAMETERS } from '../packages/core/src/http/router';
import { MAX_FILTER_TAGS } from '../packages/core/src/domain/input/tags-query';
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../packages/core/test-support/postgres-test-store';
import { listen } from '../packages/server-adapter/src/serve';
import { startTestRunloom, type TestRunloom } from './support/harness';

/**
 * Input that is not what it claims, or that grows without bound, ends in a 400 that names the
 * limit, never a 5xx (docs/api.md, "Conventions"): query parameters (count, length, numbers, tag
 * filters), the depth of every kind of structured input, and the encoding of JSON bodies.
 */

const JSON_HEADERS = { 'content-type': 'application/json' };

/** `{"level": {"level": … "leaf"}}` as JSON text: `depth` levels of objects (JSON.stringify overflows on deep values). */
function nestedJson(depth: number): string {
  return `${'{"level":'.repeat(depth)}"leaf"${'}'.repeat(depth)}`;
}

/**
 * A YAML configuration `depth` levels deep in all (the root mapping is level 1): block style while
 * the indentation stays small, flow style beyond (block indentation would outgrow the body limit).
 */
function deepYamlConfig(depth: number): string {
  if (depth > 200) return `prompt: {system: hi}\nmetadata: ${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}\n`;
  const levels = Array.from({ length: depth - 1 }, (_, level) => `${'  '.repeat(level + 1)}k:`);
  return `prompt: {system: hi}\nmetadata:\n${levels.join('\n')} 1\n`;
}

async function errorOf(response: Response, status: number): Promise<string> {
  const text = await response.text();
  assert.equal(response.status, status, text);
  const body = JSON.parse(text) as { error: unknown };
  assert.equal(typeof body.error, 'string', text);
  return body.error as string;
}

async function uploadForm(app: TestRunloom, fields: Record<string, string>): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob(['hello'], { type: 'text/plain' }), 'hello.txt');
  return app.request('/v1/resources', { method: 'POST', body: form });
}

function describeInputLimits(store: 'embedded store' | 'PostgreSQL'): void {
  describe(`input limits (${store})`, function () {
    this.timeout(60_000);
    let app: TestRunloom;
    let schema: TestSchema | undefined;
    let resourceId: string;

    before(async () => {
      if (store === 'PostgreSQL') schema = createTestSchema();
      app = await startTestRunloom({ rateLimit: 0, ...(schema ? { databaseUrl: `${TEST_DATABASE_URL}?schema=${schema.schema}` } : {}) });
      const upload = await uploadForm(app, { tags: 'red', name: 'tagged.txt' });
      assert.equal(upload.status, 201, await upload.clone().text());
      resourceId = ((await upload.json()) as { id: string }).id;
      const runnable = await app.request('/v1/runnables', {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ name: 'tagged', tags: ['red', 'blue'], config_content: 'prompt: {system: hi}\n' }),
      });
      assert.equal(runnable.status, 201, await runnable.clone().text());
    });
    after(async () => {
      await app?.close();
      await schema?.drop();
    });

    describe('tags filters', () => {
      for (const list of ['/v1/runnables', '/v1/resources']) {
        it(`${list}: any number of repeated or duplicated tags is one bounded filter, never a 5xx`, async () => {
          const names = (body: unknown): string[] => (body as { name: string }[]).map((record) => record.name);
          const expected = list === '/v1/runnables' ? ['tagged'] : ['tagged.txt'];
          // The finding: ≥ 999 repeated parameters. Past the parameter count: 400 naming the limit.
          for (const count of [999, 5_000]) {
            const error = await errorOf(await app.request(`${list}?${Array.from({ length: count }, () => 'tags=red').join('&')}`), 400);
            assert.match(error, new RegExp(`at most ${MAX_QUERY_PARAMETERS} query parameters`));
          }
          // Duplicates, repeated and comma-separated, collapse to the tags they name.
          const duplicated = await app.request(`${list}?tags=${Array.from({ length: 2_000 }, () => 'red').join(',')}&tags=red`);
          assert.equal(duplicated.status, 200, await duplicated.clone().text());
          assert.deepEqual(names(await duplicated.json()), expected);
          // As many distinct tags as a record can hold reach the store (and match nothing here)…
          const most = Array.from({ length: MAX_FILTER_TAGS }, (_, index) => (index === 0 ? 'red' : `t${index}`)).join(',');
          const full = await app.request(`${list}?tags=${most}`);
          assert.equal(full.status, 200, await full.clone().text());
          assert.deepEqual(await full.json(), []);
          // …one more is a 400 that names the limit, in one parameter or spread over several.
          const tooMany = Array.from({ length: MAX_FILTER_TAGS + 1 }, (_, index) => `t${index}`);
          for (const query of [`tags=${tooMany.join(',')}`, tooMany.map((tag) => `tags=${tag}`).join('&')]) {
            assert.match(await errorOf(await app.request(`${list}?${query}`), 400), new RegExp(`at most ${MAX_FILTER_TAGS} distinct tags`));
          }
        });
      }
    });

    if (store === 'PostgreSQL') return;

    describe('query parameters', () => {
      it(`refuses more than ${MAX_QUERY_PARAMETERS} parameters or one over ${MAX_QUERY_PARAMETER_LENGTH} characters on every route, naming the limit`, async () => {
        const routes = ['/v1/runnables', '/v1/resources', '/v1/runs', `/v1/resource/${resourceId}`, `/v1/resource/${resourceId}/content`, '/healthz', '/v1/openapi.json'];
        for (const route of routes) {
          const many = await app.request(`${route}?${Array.from({ length: MAX_QUERY_PARAMETERS + 1 }, (_, index) => `p${index}=1`).join('&')}`);
          assert.match(await errorOf(many, 400), new RegExp(`at most ${MAX_QUERY_PARAMETERS} query parameters`), route);
          const long = await app.request(`${route}?directory_path=/${'x'.repeat(MAX_QUERY_PARAMETER_LENGTH)}`);
          assert.match(await errorOf(long, 400), new RegExp(`over the limit of ${MAX_QUERY_PARAMETER_LENGTH} characters`), route);
          const longName = await app.request(`${route}?${'n'.repeat(MAX_QUERY_PARAMETER_LENGTH + 1)}=1`);
          assert.match(await errorOf(longName, 400), new RegExp(`${MAX_QUERY_PARAMETER_LENGTH} characters`), route);
          const atLimit = await app.request(`${route}?${Array.from({ length: MAX_QUERY_PARAMETERS }, (_, index) => `p${index}=1`).join('&')}`);
          assert.ok(atLimit.status < 400, `${route} with ${MAX_QUERY_PARAMETERS} parameters → ${atLimit.status}`);
        }
      });

      it('reads numeric parameters only as plain decimal integers, on every list', async () => {
        const lists = ['/v1/runnables', '/v1/resources', '/v1/runs'];
        const spellings = ['0x10', '0X10', '1e2', '1E2', '1.5', '1.0', '-1', '+1', ' 1', '1 ', '%201', '1%00', '0b1', '0o7', '1_000', 'Infinity', 'NaN', '', '１', '٣', '1,2'];
        const accepted: string[] = [];
        for (const list of lists) {
          for (const name of ['limit', 'offset']) {
            for (const spelling of spellings) {
              const response = await app.request(`${list}?${name}=${spelling.includes('%') ? spelling : encodeURIComponent(spelling)}`);
              if (response.status !== 400) accepted.push(`${list}?${name}=${JSON.stringify(spelling)} → ${response.status}`);
              else assert.match(await errorOf(response, 400), new RegExp(`${name} must be a plain decimal integer|${name}: `));
            }
            const plain = await app.request(`${list}?${name}=16`);
            assert.equal(plain.status, 200, `${list}?${name}=16`);
          }
        }
        assert.deepEqual(accepted, []);
        // A repeated number is not a number either.
        await errorOf(await app.request('/v1/resources?limit=1&limit=2'), 400);
      });
    });

    describe(`one depth limit (${MAX_JSON_DEPTH}) for every structured input`, () => {
      /** Each kind of structured input, as a request whose input is `depth` levels deep in all. */
      const kinds: Record<string, { deepest: number; send(depth: number): Promise<Response> }> = {
        'JSON body': {
          deepest: 5_000,
          send: (depth) =>
            app.request(`/v1/resource/${resourceId}`, { method: 'PATCH', headers: JSON_HEADERS, body: `{"metadata":${nestedJson(depth - 1)}}` }),
        },
        'multipart metadata field': { deepest: 5_000, send: (depth) => uploadForm(app, { metadata: nestedJson(depth) }) },
        'multipart tags field': { deepest: 5_000, send: (depth) => uploadForm(app, { tags: `${'['.repeat(depth)}${']'.repeat(depth)}` }) },
        'metadata query parameter of a raw upload': {
          deepest: 700, // 10 characters a level: deeper is over the query parameter length limit
          send: (depth) =>
            app.request(`/v1/resources?name=raw.txt&metadata=${encodeURIComponent(nestedJson(depth))}`, {
              method: 'POST',
              headers: { 'content-type': 'text/plain' },
              body: 'raw',
            }),
        },
        'YAML configuration': {
          deepest: 3_000,
          send: (depth) => app.request('/v1/runnables', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ name: 'deep', config_content: deepYamlConfig(depth) }) }),
        },
        'configuration object': {
          deepest: 5_000,
          send: (depth) =>
            app.request('/v1/runnables', {
              method: 'POST',
              headers: JSON_HEADERS,
              body: `{"name":"deep","config_content_parsed":{"prompt":{"system":"hi"},"metadata":${nestedJson(depth - 2)}}}`,
            }),
        },
      };

      for (const [kind, { deepest, send }] of Object.entries(kinds)) {
        it(`${kind}: refused past the limit with the one message, never a 5xx`, async () => {
          for (const depth of [MAX_JSON_DEPTH + 1, MAX_JSON_DEPTH + 2, 500, deepest]) {
            const error = await errorOf(await send(depth), 400);
            assert.ok(error.includes(TOO_DEEP_MESSAGE), `${kind} ${depth} deep: ${error}`);
          }
        });
      }

      it('accepts each kind at the limit', async () => {
        for (const [kind, { send }] of Object.entries(kinds)) {
          if (kind === 'multipart tags field') continue; // tags are a list of strings: any nesting is refused
          const response = await send(MAX_JSON_DEPTH);
          assert.ok(response.status === 200 || response.status === 201, `${kind} at ${MAX_JSON_DEPTH}: ${response.status} ${await response.text()}`);
        }
      });
    });

    describe('JSON bodies are UTF-8', () => {
      /** Malformed UTF-8, each inside a JSON string value. */
      const malformed: Record<string, number[]> = {
        'lone continuation byte': [0x80],
        'overlong encoding of /': [0xc0, 0xaf],
        'truncated three-byte sequence': [0xe2, 0x82],
        'encoded surrogate': [0xed, 0xa0, 0x80],
        'code point past U+10FFFF': [0xf4, 0x90, 0x80, 0x80],
        'byte that never occurs': [0xff],
        'Latin-1 é': [0xe9],
      };
      const body = (bytes: number[]): Uint8Array<ArrayBuffer> =>
        new Uint8Array([...Buffer.from('{"name":"a'), ...bytes, ...Buffer.from('b","config_content":"prompt: {system: hi}"}')]);

      it('refuses every malformed sequence with 400, through runloom.handle and through node:http', async () => {
        const server = await listen(app.runloom, { host: '127.0.0.1', port: 0, shutdownGraceMs: 1_000 });
        try {
          const { port } = server.server.address() as AddressInfo;
          const token = await app.token();
          for (const [label, bytes] of Object.entries(malformed)) {
            const direct = await app.request('/v1/runnables', { method: 'POST', headers: JSON_HEADERS, body: body(bytes) });
            assert.match(await errorOf(direct, 400), /not valid UTF-8/, label);
            const request = http.request({ port, host: '127.0.0.1', path: '/v1/runnables', method: 'POST', headers: { ...JSON_HEADERS, authorization: `Bearer ${token}` } });
            request.end(Buffer.from(body(bytes)));
            const [response] = (await once(request, 'response')) as [IncomingMessage];
            const chunks: Buffer[] = [];
            for await (const chunk of response) chunks.push(chunk as Buffer);
            assert.equal(response.statusCode, 400, `${label} over node:http: ${Buffer.concat(chunks).toString()}`);
            assert.match(Buffer.concat(chunks).toString(), /not valid UTF-8/);
          }
          // Valid multi-byte text and a leading BOM are read as sent.
          const valid = await app.request('/v1/runnables', { method: 'POST', headers: JSON_HEADERS, body: body([...Buffer.from('é😀')]) });
          assert.equal(valid.status, 201, await valid.clone().text());
          assert.equal(((await valid.json()) as { name: string }).name, 'aé😀b');
          const bom = await app.request('/v1/runnables', { method: 'POST', headers: JSON_HEADERS, body: new Uint8Array([0xef, 0xbb, 0xbf, ...body([])]) });
          assert.equal(bom.status, 201);
        } finally {
          await server.stop();
        }
      });

      it('refuses malformed UTF-8 in a form-encoded body too (POST /auth/token)', async () => {
        const response = await app.runloom.handle(
          new Request('http://runloom.test/auth/token', {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new Uint8Array([...Buffer.from('grant_type=client_credentials&client_id=a'), 0xff]),
          }),
        );
        assert.match(await errorOf(response, 400), /not valid UTF-8/);
      });
    });
  });
}

describeInputLimits('embedded store');
describeInputLimits('PostgreSQL');
