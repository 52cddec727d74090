import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import ts from 'typescript';
import { Router } from '../packages/core/src/index';
import { startTestRunloom, TEST_ORIGIN, type TestRunloom } from './support/harness';
import {
  deref,
  DocumentValidator,
  operationsOf,
  resolveResponse,
  type OpenApiDocument,
  type OpenApiOperation,
} from './support/openapi-document';

/** Where every JSON Schema of the document is: parameter, request body and response schemas, as pointers. */
function schemasOf(document: OpenApiDocument): { where: string; pointer: string[] }[] {
  const found: { where: string; pointer: string[] }[] = [];
  for (const { key, operation, pointer } of operationsOf(document)) {
    (operation.parameters ?? []).forEach((parameter, index) => {
      found.push({ where: `${key} ${parameter.name}`, pointer: [...pointer, 'parameters', String(index), 'schema'] });
    });
    for (const [mediaType, content] of Object.entries(operation.requestBody?.content ?? {})) {
      if (content.schema) found.push({ where: `${key} request ${mediaType}`, pointer: [...pointer, 'requestBody', 'content', mediaType, 'schema'] });
    }
    for (const [status, declared] of Object.entries(operation.responses)) {
      const { response, pointer: at } = resolveResponse(document, declared, [...pointer, 'responses', status]);
      for (const [mediaType, content] of Object.entries(response.content ?? {})) {
        if (content.schema) found.push({ where: `${key} ${status} ${mediaType}`, pointer: [...at, 'content', mediaType, 'schema'] });
      }
    }
  }
  for (const name of Object.keys(document.components.schemas)) found.push({ where: `components.schemas.${name}`, pointer: ['components', 'schemas', name] });
  return found;
}

describe('GET /v1/openapi.json', () => {
  let t: TestRunloom;
  let document: OpenApiDocument;

  before(async () => {
    t = await startTestRunloom();
    // Public: fetched without a bearer token.
    const response = await t.runloom.handle(new Request(`${TEST_ORIGIN}/v1/openapi.json`));
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    document = (await response.json()) as OpenApiDocument;
  });
  after(async () => {
    await t.close();
  });

  it('passes a standard OpenAPI 3.1 validator', async () => {
    const result = await new Validator().validate(document as unknown as Record<string, unknown>);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.match(document.openapi, /^3\.1\./);
  });

  it('declares version 1.0.0 and a bearer security scheme that applies by default', () => {
    assert.equal(document.info.version, '1.0.0');
    const schemes = Object.entries(document.components.securitySchemes);
    const bearer = schemes.find(([, scheme]) => scheme.type === 'http' && scheme.scheme === 'bearer');
    assert.ok(bearer, 'a bearer scheme');
    assert.deepEqual(document.security, [{ [bearer[0]]: [] }]);
  });

  it('lists every route the router serves, public ones without security, with their path parameters', () => {
    const routes = t.runloom.container.get(Router).routes.filter((definition) => !definition.hidden);
    assert.ok(routes.length > 0);
    for (const definition of routes) {
      const operation = document.paths[definition.path]?.[definition.method.toLowerCase()];
      assert.ok(operation, `${definition.method} ${definition.path} is documented`);
      if (definition.public) assert.deepEqual(operation.security, [], `${definition.method} ${definition.path} is public`);
      else {
        assert.equal(operation.security, undefined, `${definition.method} ${definition.path} needs the bearer token`);
        assert.ok((operation.responses as Record<string, unknown>)['401'], `${definition.method} ${definition.path} documents its 401`);
      }
      const pathParameters = [...definition.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      assert.deepEqual(
        operation.parameters?.filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name),
        pathParameters,
        `${definition.method} ${definition.path} path parameters`,
      );
    }
    const documented = Object.values(document.paths).reduce((count, operations) => count + Object.keys(operations).length, 0);
    assert.equal(documented, routes.length, 'no operation without a route');
  });

  it('gives every operation a unique operationId', () => {
    const ids = Object.values(document.paths).flatMap((operations) => Object.values(operations).map((operation) => operation.operationId));
    assert.equal(new Set(ids).size, ids.length);
  });

  it('describes the runnables API from the schemas that validate it', () => {
    const create = document.paths['/v1/runnables']?.post as Record<string, any>;
    const body = deref(document, create.requestBody.content['application/json'].schema)!;
    assert.deepEqual(body.required, ['name']);
    assert.ok(body.properties.config_content && body.properties.config_content_parsed && body.properties.tags);
    const record = deref(document, create.responses['201'].content['application/json'].schema)!;
    assert.ok(record.required.includes('config_content_type'));
    const list = document.paths['/v1/runnables']?.get as Record<string, any>;
    const type = list.parameters.find((parameter: { name: string }) => parameter.name === 'type');
    assert.deepEqual(type.schema.enum, ['prompt', 'flow', 'agent']);
  });

  it('holds only JSON Schemas that compile (draft 2020-12, the dialect of OpenAPI 3.1), their $refs resolved', () => {
    const validator = new DocumentValidator(document);
    for (const { where, pointer } of schemasOf(document)) {
      assert.doesNotThrow(() => validator.at(pointer), where);
    }
  });

  it('names the records and request bodies in components, and operations refer to them by $ref', () => {
    for (const name of ['Runnable', 'RunnableCreate', 'Run', 'RunRequest', 'Resource', 'Provider', 'GoldLabel', 'Evaluation', 'Error', 'TokenRequest']) {
      assert.ok(document.components.schemas[name], `components.schemas.${name}`);
    }
    const ref = (name: string): object => ({ $ref: `#/components/schemas/${name}` });
    const json = (operation: OpenApiOperation | undefined, status: string): unknown => operation?.responses[status]?.content?.['application/json']?.schema;
    assert.deepEqual(json(document.paths['/v1/runnable/{id}']?.get, '200'), ref('Runnable'));
    assert.deepEqual(json(document.paths['/v1/run/{id}']?.get, '200'), ref('Run'));
    assert.deepEqual(json(document.paths['/v1/resources']?.get, '200'), { type: 'array', items: ref('Resource') });
    assert.deepEqual(document.paths['/v1/runnable/{id}/runs']?.post?.requestBody?.content['application/json']?.schema, ref('RunRequest'));
  });

  it('gives every request body a schema: JSON and form fields, multipart fields, raw bytes as binary', () => {
    for (const { key, operation } of operationsOf(document)) {
      for (const [mediaType, content] of Object.entries(operation.requestBody?.content ?? {})) {
        assert.ok(content.schema && Object.keys(content.schema).length > 0, `${key} ${mediaType} has a schema`);
      }
    }
    const token = document.paths['/auth/token']?.post?.requestBody?.content ?? {};
    assert.deepEqual(Object.keys(token).sort(), ['application/json', 'application/x-www-form-urlencoded']);
    for (const content of Object.values(token)) assert.deepEqual(deref(document, content.schema)?.required, ['grant_type']);
    const upload = document.paths['/v1/resources']?.post?.requestBody?.content ?? {};
    assert.deepEqual(upload['*/*']?.schema, { type: 'string', format: 'binary' });
    assert.deepEqual(deref(document, upload['multipart/form-data']?.schema)?.properties?.file, {
      type: 'string',
      format: 'binary',
      description: 'the content; its Content-Type becomes mime_type',
    });
  });

  it('declares the answers the router gives on every operation they apply to (400, 401, 404, 405, 413, 415, 429, 431, 500)', () => {
    const routes = new Map(t.runloom.container.get(Router).routes.map((definition) => [`${definition.method} ${definition.path}`, definition]));
    for (const { key, operation } of operationsOf(document)) {
      const definition = routes.get(key)!;
      const expected = ['400', '405', '431', '500'];
      if (!definition.public) expected.push('401', '429');
      if (definition.path.includes('{')) expected.push('404');
      if (definition.body) expected.push('413', '415');
      for (const status of expected) assert.ok(operation.responses[status], `${key} declares ${status}`);
    }
    const internal = resolveResponse(document, document.paths['/v1/runs']!.get!.responses['500']!, []).response;
    assert.deepEqual(internal.content?.['application/json']?.schema, { $ref: '#/components/schemas/Error' });
    const limited = resolveResponse(document, document.paths['/v1/runs']!.get!.responses['429']!, []).response;
    assert.ok(limited.headers?.['Retry-After'], '429 declares Retry-After');
  });

  it('declares the content route as serving the media type the content was stored with', () => {
    const content = document.paths['/v1/resource/{id}/content']!.get!;
    for (const status of ['200', '206']) assert.deepEqual(Object.keys(content.responses[status]?.content ?? {}), ['*/*'], status);
  });

  it('declares the details of a refused configuration as they are: path, message, line and column', async () => {
    const response = await t.request('/v1/runnables', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'broken', config_content: 'prompt:\n  messages:\n    - role: user\n      content: [unclosed\n' }),
    });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { details: { line?: number; column?: number }[] };
    assert.ok(body.details.some((detail) => typeof detail.line === 'number' && typeof detail.column === 'number'), JSON.stringify(body));
    const validator = new DocumentValidator(document);
    const validate = validator.at(['paths', '/v1/runnables', 'post', 'responses', '400', 'content', 'application/json', 'schema']);
    assert.ok(validate(body), validator.errorsText(validate));
  });

  it('generates a typed client (openapi-typescript) that gets a token, creates a runnable and runs it with no untyped body', async function () {
    this.timeout(120_000);
    const { default: openapiTS, astToString } = await import('openapi-typescript');
    const source = astToString(await openapiTS(document as never, { silent: true }));
    // Inside the repository, so the program resolves openapi-fetch from its node_modules.
    const dir = fs.mkdtempSync(path.join(__dirname, '.openapi-client-'));
    try {
      fs.writeFileSync(path.join(dir, 'schema.d.ts'), source);
      fs.writeFileSync(path.join(dir, 'program.ts'), CLIENT_PROGRAM);
      const program = ts.createProgram([path.join(dir, 'program.ts')], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.Preserve,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
        types: [],
        skipLibCheck: true,
      });
      const diagnostics = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
        const where = diagnostic.file ? `${path.basename(diagnostic.file.fileName)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1} ` : '';
        return `${where}${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
      });
      assert.deepEqual(diagnostics, []);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A client program written against the generated types. It type-checks only if the request bodies
 * are typed: each `@ts-expect-error` needs a wrong body to be refused, and `Typed` fails on
 * `unknown` or `never`.
 */
const CLIENT_PROGRAM = `
import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

type IsUnknown<T> = unknown extends T ? true : false;
type IsNever<T> = [T] extends [never] ? true : false;
type Typed<T> = IsNever<T> extends true ? false : IsUnknown<T> extends true ? false : true;
type BodyOf<P extends keyof paths, M extends keyof paths[P], Media extends string> =
  NonNullable<paths[P][M] extends { requestBody?: infer B } ? B : never> extends { content: infer C }
    ? Media extends keyof C ? C[Media] : never
    : never;

export const typedBodies: [true, true, true, true, true] = [
  true as Typed<BodyOf<'/auth/token', 'post', 'application/json'>>,
  true as Typed<BodyOf<'/auth/token', 'post', 'application/x-www-form-urlencoded'>>,
  true as Typed<BodyOf<'/v1/runnables', 'post', 'application/json'>>,
  true as Typed<BodyOf<'/v1/runnable/{id}/runs', 'post', 'application/json'>>,
  true as Typed<BodyOf<'/v1/resources', 'post', 'multipart/form-data'>>,
];

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:8787' });

export async function summarize(clientId: string, clientSecret: string): Promise<components['schemas']['Run'] | undefined> {
  const token = await client.POST('/auth/token', {
    body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
  });
  if (!token.data) throw new Error('no token');
  const expiresIn: number = token.data.expires_in;
  const headers = { Authorization: \`Bearer \${token.data.access_token}\` };

  const created = await client.POST('/v1/runnables', {
    headers,
    body: { name: 'summarize', tags: ['docs'], config_content: 'prompt:\\n  messages:\\n    - role: user\\n      content: Summarize {{document}}\\n' },
  });
  if (!created.data) throw new Error(\`refused: \${created.error?.error}\`);
  const runnable: components['schemas']['Runnable'] = created.data;

  const run = await client.POST('/v1/runnable/{id}/runs', {
    headers,
    params: { path: { id: runnable.id }, query: { mode: 'sync' } },
    body: { resources: [], timeout_seconds: 30, telemetry_strategy: 'force' },
  });
  if (!run.data || !('status' in run.data)) return undefined;
  const status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'timed_out' = run.data.status;
  void status;
  void expiresIn;

  // @ts-expect-error grant_type is client_credentials
  await client.POST('/auth/token', { body: { grant_type: 'password' } });
  // @ts-expect-error name is a string
  await client.POST('/v1/runnables', { headers, body: { name: 42 } });
  // @ts-expect-error telemetry_strategy is one of default, force, disable
  await client.POST('/v1/runnable/{id}/runs', { headers, params: { path: { id: runnable.id } }, body: { telemetry_strategy: 'always' } });
  return run.data;
}
`;
