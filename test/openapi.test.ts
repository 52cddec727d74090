import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020';
import { Router } from '../packages/core/src/index';
import { startTestRunloom, TEST_ORIGIN, type TestRunloom } from './support/harness';

type Operation = { operationId: string; security?: unknown[]; parameters?: { name: string; in: string; schema: object }[] } & Record<string, unknown>;
type OpenApiDocument = {
  openapi: string;
  info: { version: string };
  components: { securitySchemes: Record<string, { type: string; scheme?: string }> };
  security: Record<string, unknown[]>[];
  paths: Record<string, Record<string, Operation>>;
};

/** Every JSON Schema of the document: parameter, request body and response schemas. */
function schemasOf(document: OpenApiDocument): { where: string; schema: object }[] {
  const found: { where: string; schema: object }[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const where = `${method.toUpperCase()} ${path}`;
      for (const parameter of operation.parameters ?? []) found.push({ where: `${where} ${parameter.name}`, schema: parameter.schema });
      const contents = [
        ...Object.values(((operation.requestBody as { content?: object } | undefined)?.content ?? {}) as Record<string, { schema?: object }>),
        ...Object.values((operation.responses ?? {}) as Record<string, { content?: Record<string, { schema?: object }> }>).flatMap((response) =>
          Object.values(response.content ?? {}),
        ),
      ];
      for (const content of contents) if (content.schema) found.push({ where, schema: content.schema });
    }
  }
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
    const result = await new Validator().validate(document);
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
    const body = create.requestBody.content['application/json'].schema;
    assert.deepEqual(body.required, ['name']);
    assert.ok(body.properties.config_content && body.properties.config_content_parsed && body.properties.tags);
    const record = create.responses['201'].content['application/json'].schema;
    assert.ok(record.required.includes('config_content_type'));
    const list = document.paths['/v1/runnables']?.get as Record<string, any>;
    const type = list.parameters.find((parameter: { name: string }) => parameter.name === 'type');
    assert.deepEqual(type.schema.enum, ['prompt', 'flow', 'agent']);
  });

  it('holds only JSON Schemas that compile (draft 2020-12, the dialect of OpenAPI 3.1)', () => {
    // Formats are annotations here; the point is that every schema is well-formed.
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const distinct = new Map(schemasOf(document).map(({ where, schema }) => [JSON.stringify(schema), where]));
    for (const [schema, where] of distinct) {
      assert.doesNotThrow(() => ajv.compile(JSON.parse(schema) as object), where);
    }
  });
});
