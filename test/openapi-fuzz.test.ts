import assert from 'node:assert/strict';
import fc from 'fast-check';
import { listen, type ListeningServer } from '../packages/server-adapter/src/serve';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { startCallbackReceiver } from './support/callback-sink';
import { createAccountRecords } from './support/account-records';
import { answerText } from './support/event-stream';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { hostileQueryValues, hostileSegments, MALFORMED_JSON, WRONG_TOP_LEVEL } from './support/hostile-inputs';
import { arbitraryFor, type SchemaArbitraryOptions } from './support/json-schema-arbitrary';
import { mutate, type JsonSchema } from './support/json-schema-sample';
import { DocumentValidator, operationsOf, resolveResponse, type DocumentOperation, type OpenApiDocument, type OpenApiParameter } from './support/openapi-document';
import { isIdParam, recordKindOf } from './support/route-catalog';
import { SeededRandom } from './support/seeded-random';

/**
 * A property-based fuzzer driven by the served OpenAPI document (the way Schemathesis works): for
 * every operation in the document, fast-check generates requests from the operation's own
 * parameter and body schemas — valid ones and deliberately broken ones — and sends them to a live
 * server, as one account whose records exist. Every answer must be declared by the document for
 * that operation: no 5xx, a declared status, a declared content type, and a body that validates
 * (ajv) against the declared schema. Operations are read from the document, so a new route is
 * fuzzed as soon as it is served.
 *
 * Reproduce: the seed is printed; `FUZZ_SEED=<seed>` runs the same cases, `FUZZ_RUNS=<n>` sets the
 * cases per operation, `FUZZ_ONLY=<text>` keeps the operations whose `METHOD /path` contains it.
 */
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 0x7fffffff);
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const ONLY = process.env.FUZZ_ONLY;
const ACCOUNT = 'acct-fuzz';
const JSON_LIMIT_BYTES = 64 * 1024;
const UPLOAD_LIMIT_BYTES = 256 * 1024;

interface FuzzRequest {
  /** What kind of case this is, for the report: `valid`, or what was broken. */
  label: string;
  /** Path parameter values, URL-encoded. */
  path: Record<string, string>;
  query: [string, string][];
  /** undefined: the account's bearer; null: none; a string: that Authorization header. */
  authorization?: string | null;
  contentType?: string;
  body?: string | { bytes: number[] } | { form: [string, string | { file: number[]; type: string }][] };
  /** Why the document does not allow this request, when it certainly does not: it must be refused with a 4xx. */
  mustRefuse?: string;
}

interface Violation {
  operation: string;
  status: number;
  problem: string;
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

/** A request as a failure report shows it: long values cut short. */
function describeRequest(request: FuzzRequest): string {
  const body = typeof request.body === 'string' ? excerpt(request.body, 200) : request.body ? excerpt(JSON.stringify(request.body), 200) : 'none';
  const query = excerpt(request.query.map(([name, value]) => `${name}=${excerpt(value, 60)}`).join('&'), 200);
  const authorization = request.authorization === undefined ? 'bearer' : String(request.authorization);
  return `${request.label}; path ${JSON.stringify(request.path)}; query ${query || 'none'}; authorization ${authorization}; ${request.contentType ?? 'no content type'} body ${body}`;
}

/**
 * Whether a query value is certainly not a value of its parameter's schema: a number that is not
 * a plain decimal integer within the bounds, or a value outside an enum. Other strings make no claim.
 */
function violatesQuerySchema(schema: JsonSchema, value: string): boolean {
  if (Array.isArray(schema.enum)) return !schema.enum.includes(value);
  if (schema.type === 'integer' || schema.type === 'number') {
    if (!/^(0|-?[1-9][0-9]*)$/.test(value) || !Number.isSafeInteger(Number(value))) return true;
    const number = Number(value);
    return (typeof schema.minimum === 'number' && number < schema.minimum) || (typeof schema.maximum === 'number' && number > schema.maximum);
  }
  return false;
}

/** A stable 31-bit number of a text: each operation's cases depend on the seed and its own name only. */
function hash(text: string): number {
  let value = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) value = Math.imul(value ^ text.charCodeAt(index), 0x01000193);
  return value >>> 1;
}

/** `type/subtype` of a Content-Type, lower-case. */
function essence(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

function mediaTypeMatches(range: string, actual: string): boolean {
  if (range === '*/*') return actual !== '';
  if (range.endsWith('/*')) return actual.startsWith(range.slice(0, -1));
  return range === actual;
}

function queryValue(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(queryValue);
  return [typeof value === 'string' ? value : JSON.stringify(value)];
}

function excerpt(text: string, length = 300): string {
  return text.length > length ? `${text.slice(0, length)}… (${text.length} chars)` : text;
}

describe('OpenAPI-driven fuzzer: every operation of the document, valid and broken requests', function () {
  this.timeout(300_000);

  let t: TestRunloom;
  let server: ListeningServer;
  let vendor: FakeVendorServer;
  let receiver: Awaited<ReturnType<typeof startCallbackReceiver>>;
  let document: OpenApiDocument;
  let validator: DocumentValidator;
  let bearer: string;
  const known = new Map<string, string[]>();

  before(async () => {
    vendor = await startFakeVendor('openai');
    receiver = await startCallbackReceiver();
    t = await startTestRunloom({
      allowPrivateNetwork: true,
      rateLimit: 0,
      jsonBodyLimitBytes: JSON_LIMIT_BYTES,
      uploadLimitBytes: UPLOAD_LIMIT_BYTES,
      callbackMaxAttempts: 1,
      callbackInitialBackoffMs: 10,
    });
    server = await listen(t.runloom, { host: '127.0.0.1', port: 0, shutdownGraceMs: 2_000 });
    const records = await createAccountRecords(t, { account: ACCOUNT, vendor, callback: { url: receiver.url, headers: { 'x-fuzz': 'callback' } } });
    const evaluation = await t.request(`/v1/run/${records.run}/evaluations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ gold_label_id: records.gold_label }),
      account: ACCOUNT,
    });
    assert.equal(evaluation.status, 201, await evaluation.clone().text());
    // A runnable with no inputs: runs of it are accepted without resources, so valid run requests run.
    const bare = await t.request('/v1/runnables', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'no inputs', config_content_parsed: { prompt: { messages: [{ role: 'user', content: 'Say hi.' }] }, llms: [{ model: `openai/${vendor.model}` }] } }),
      account: ACCOUNT,
    });
    assert.equal(bare.status, 201, await bare.clone().text());
    const run = (await (await t.request(`/v1/run/${records.run}`, { account: ACCOUNT })).json()) as { outputs: { name: string }[] };
    known.set('output_resource_name', run.outputs.map((output) => output.name));
    const client = await t.runloom.auth.createClient(ACCOUNT);
    for (const [kind, id] of [
      ['runnable', records.runnable],
      ['runnable', ((await bare.json()) as { id: string }).id],
      ['run', records.run],
      ['resource', records.resource],
      ['gold_label', records.gold_label],
      ['workspace', records.workspace],
      ['template', records.template],
      ['evaluation', ((await evaluation.json()) as { id: string }).id],
      ['client', client.client_id],
    ] as const) {
      known.set(kind, [...(known.get(kind) ?? []), id]);
    }
    known.set('client_secret', [client.client_secret]);
    bearer = await t.token(ACCOUNT);
    const served = await fetch(`${server.url}/v1/openapi.json`);
    assert.equal(served.status, 200);
    document = (await served.json()) as OpenApiDocument;
    validator = new DocumentValidator(document);
  });

  after(async () => {
    await server?.stop();
    await t?.close();
    await vendor?.close();
    await receiver?.close();
  });

  it('answers every generated request as the document declares, with no 5xx', async () => {
    // Destructive operations last, so the records stay for the operations before them.
    const operations = operationsOf(document)
      .filter((operation) => !ONLY || operation.key.includes(ONLY))
      .sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
    assert.ok(operations.length > 0, 'the document has operations');
    console.log(`      openapi-fuzz: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}, ${operations.length} operations`);
    const failures: string[] = [];
    let requests = 0;
    const statuses = new Map<number, number>();
    for (const operation of operations) {
      const seed = (SEED ^ hash(operation.key)) | 0;
      const result = await fc.check(
        fc.asyncProperty(requestArbitrary(operation), async (request) => {
          requests += 1;
          const answer = await send(operation, request);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          const violations = check(operation, request, answer);
          if (violations.length > 0) {
            throw new Error(`${violations.map((violation) => `${violation.status}: ${violation.problem}`).join('\n')}\nanswer: ${answer.contentType} ${excerpt(answer.text)}`);
          }
        }),
        { seed, numRuns: RUNS },
      );
      if (result.failed) {
        const [request] = result.counterexample ?? [];
        failures.push(
          [
            `${operation.key}: ${result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance)}`,
            `  request (shrunk ${result.numShrinks}×): ${request ? describeRequest(request) : '?'}`,
            `  reproduce: FUZZ_SEED=${SEED} FUZZ_ONLY='${operation.key}' (fast-check seed ${result.seed}, path ${result.counterexamplePath ?? ''})`,
          ].join('\n'),
        );
      }
    }
    const byStatus = [...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}×${count}`).join(' ');
    console.log(`      openapi-fuzz: ${requests} requests, answered ${byStatus}`);
    assert.equal(failures.length, 0, `${failures.length} operation(s) answered outside the document:\n\n${failures.join('\n\n')}`);
  });

  /** The arbitrary of one operation's requests: mostly valid, some broken in one part. */
  function requestArbitrary(operation: DocumentOperation): fc.Arbitrary<FuzzRequest> {
    const parameters = operation.operation.parameters ?? [];
    const pathParameters = parameters.filter((parameter) => parameter.in === 'path');
    const queryParameters = parameters.filter((parameter) => parameter.in === 'query');
    const options: SchemaArbitraryOptions = {
      resolve: (ref) => {
        const name = /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1];
        return name === undefined ? undefined : document.components.schemas[name];
      },
      knownValues: (property) => {
        if (property === 'client_secret') return known.get('client_secret');
        if (property === 'client_id') return known.get('client');
        if (property === 'resource') return known.get('resource');
        if (property === 'output_resource_name') return known.get('output_resource_name');
        return isIdParam(property) ? known.get(recordKindOf(operation.path, property)) : undefined;
      },
      urls: [receiver.url],
    };

    const validPath = fc.record(
      Object.fromEntries(pathParameters.map((parameter) => [parameter.name, pathValue(operation, parameter, options)])),
    ) as fc.Arbitrary<Record<string, string>>;
    const hostilePath = fc.record(
      Object.fromEntries(
        pathParameters.map((parameter) => [parameter.name, fc.constantFrom(...hostileSegments(new SeededRandom(1), known.get('run')![0]!).map(([, segment]) => segment))]),
      ),
    ) as fc.Arbitrary<Record<string, string>>;
    const validQuery = fc
      .tuple(
        ...queryParameters.map((parameter) =>
          parameter.required
            ? arbitraryFor(parameter.schema, options, 1, parameter.name).map((value) => [parameter.name, value] as const)
            : fc.option(arbitraryFor(parameter.schema, options, 1, parameter.name).map((value) => [parameter.name, value] as const), { nil: undefined }),
        ),
      )
      .map((entries) => entries.flatMap((entry) => (entry ? queryValue(entry[1]).map((value) => [entry[0], value] as [string, string]) : [])));
    const hostileQuery: fc.Arbitrary<Pick<FuzzRequest, 'query' | 'mustRefuse'>> = fc.oneof(
      fc.constant({ query: [['unknown', 'x'.repeat(4096)]] as [string, string][] }),
      ...queryParameters.flatMap((parameter) => [
        fc.constantFrom(...hostileQueryValues(parameter.schema)).map(([name, value]) => ({
          query: [[parameter.name, value]] as [string, string][],
          mustRefuse: violatesQuerySchema(parameter.schema, value) ? `${parameter.name}=${excerpt(value, 40)} (${name}) is not a value of its schema` : undefined,
        })),
        // The count of query parameters is bounded: many repetitions are refused, never a 5xx.
        fc.constant({ query: Array.from({ length: 1000 }, (_, index) => [parameter.name, `v${index}`] as [string, string]) }),
      ]),
    );

    const content = operation.operation.requestBody?.content ?? {};
    const bodies = Object.entries(content).map(([mediaType, { schema }]) => validBody(mediaType, schema, options));
    const validBodyArbitrary: fc.Arbitrary<Pick<FuzzRequest, 'contentType' | 'body'>> = bodies.length === 0 ? fc.constant({}) : fc.oneof(...bodies);

    const valid = fc.record({ path: validPath, query: validQuery, body: validBodyArbitrary }).map(
      ({ path, query, body }): FuzzRequest => ({ label: 'valid', path, query, ...body }),
    );
    const broken: fc.Arbitrary<FuzzRequest>[] = [
      fc.record({ path: validPath, query: hostileQuery, body: validBodyArbitrary }).map(({ path, query, body }) => ({ label: 'hostile query', path, ...query, ...body })),
      fc.record({ path: validPath, query: validQuery, body: validBodyArbitrary, authorization: fc.constantFrom<string | null>(null, 'Bearer not-a-jwt', 'Basic Og==') }).map(
        ({ path, query, body, authorization }) => ({ label: `authorization ${String(authorization)}`, path, query, authorization, ...body }),
      ),
    ];
    if (pathParameters.length > 0) {
      broken.push(fc.record({ path: hostilePath, query: validQuery, body: validBodyArbitrary }).map(({ path, query, body }) => ({ label: 'hostile path', path, query, ...body })));
    }
    if (Object.keys(content).length > 0) {
      broken.push(
        fc.record({ path: validPath, query: validQuery, body: brokenBody(operation, options) }).map(({ path, query, body }) => ({ ...body, path, query })),
      );
    }
    return fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: fc.oneof(...broken), weight: 2 });
  }

  /** A path value: a known record of the kind the parameter names, or one of its schema, URL-encoded. */
  function pathValue(operation: DocumentOperation, parameter: OpenApiParameter, options: SchemaArbitraryOptions): fc.Arbitrary<string> {
    const ids = isIdParam(parameter.name) ? known.get(recordKindOf(operation.path, parameter.name)) : undefined;
    const generated = arbitraryFor(parameter.schema, options, 1).map((value) => encodeURIComponent(String(value)));
    return ids ? fc.oneof({ arbitrary: fc.constantFrom(...ids), weight: 5 }, { arbitrary: generated, weight: 1 }) : generated;
  }

  function validBody(mediaType: string, schema: JsonSchema | undefined, options: SchemaArbitraryOptions): fc.Arbitrary<Pick<FuzzRequest, 'contentType' | 'body'>> {
    const value = arbitraryFor(schema, options);
    if (mediaType === 'application/json') return value.map((body) => ({ contentType: 'application/json', body: JSON.stringify(body) }));
    if (mediaType === 'application/x-www-form-urlencoded') {
      return value.map((body) => ({
        contentType: mediaType,
        body: new URLSearchParams(Object.entries(body as object).flatMap(([name, item]) => queryValue(item).map((text) => [name, text]))).toString(),
      }));
    }
    if (mediaType === 'multipart/form-data') {
      const properties = (options.resolve(String(schema?.$ref ?? '')) ?? schema)?.properties as Record<string, JsonSchema> | undefined;
      const binary = new Set(Object.entries(properties ?? {}).filter(([, property]) => property.format === 'binary').map(([name]) => name));
      return fc.tuple(value, fc.uint8Array({ maxLength: 512 }), fc.constantFrom('text/plain', 'application/pdf', 'image/png', 'application/json')).map(([body, bytes, type]) => ({
        contentType: mediaType,
        body: {
          form: Object.entries(body as object).flatMap(([name, item]): [string, string | { file: number[]; type: string }][] =>
            binary.has(name) ? [[name, { file: [...bytes], type }]] : queryValue(item).map((text) => [name, text]),
          ),
        },
      }));
    }
    // Raw bytes: any media type the range admits.
    const types = mediaType === '*/*' ? ['text/plain', 'application/octet-stream', 'image/png', 'text/html', 'application/json', 'text/plain; charset=utf-8'] : [mediaType];
    return fc.tuple(fc.uint8Array({ maxLength: 1024 }), fc.constantFrom(...types)).map(([bytes, contentType]) => ({ contentType, body: { bytes: [...bytes] } }));
  }

  /** A body broken one way: a mutated valid body, malformed JSON, the wrong media type, none, or one over the limit. */
  function brokenBody(operation: DocumentOperation, options: SchemaArbitraryOptions): fc.Arbitrary<Pick<FuzzRequest, 'label' | 'contentType' | 'body' | 'mustRefuse'>> {
    const requestBody = operation.operation.requestBody!;
    const content = requestBody.content;
    const jsonSchema = content['application/json']?.schema;
    const json = 'application/json';
    // An operation that takes any media type (raw uploads) takes these bodies as bytes: no claim then.
    const anyType = Object.keys(content).some((mediaType) => mediaType.endsWith('/*'));
    const refuse = (reason: string): string | undefined => (anyType ? undefined : reason);
    const cases: fc.Arbitrary<Pick<FuzzRequest, 'label' | 'contentType' | 'body' | 'mustRefuse'>>[] = [
      fc.constantFrom(...MALFORMED_JSON, ...WRONG_TOP_LEVEL).map((body) => ({ label: 'malformed body', contentType: json, body, mustRefuse: refuse(`the body ${excerpt(body, 20)} is not a JSON object`) })),
      fc.constantFrom('text/plain', 'application/xml', 'multipart/form-data', 'application/x-www-form-urlencoded', '').map((contentType) => ({
        label: `body as ${contentType || 'no media type'}`,
        contentType: contentType || undefined,
        body: '{"a":1}',
        mustRefuse: contentType in content ? undefined : refuse(`the media type '${contentType || 'text/plain'}' is not declared`),
      })),
      fc.constant({ label: 'no body', mustRefuse: requestBody.required ? refuse('the body is required') : undefined }),
      fc.constant({
        label: 'body over the JSON limit',
        contentType: json,
        body: JSON.stringify({ name: 'x'.repeat(JSON_LIMIT_BYTES + 16) }),
        mustRefuse: refuse(`the body is over the JSON limit of ${JSON_LIMIT_BYTES} bytes`),
      }),
      fc.constant({
        label: 'invalid UTF-8 in JSON',
        contentType: json,
        body: { bytes: [...Buffer.from('{"name":"'), 0xff, 0xfe, 0xc0, 0xae, ...Buffer.from('","grant_type":"client_credentials"}')] },
        mustRefuse: refuse('a JSON body must be UTF-8'),
      }),
    ];
    if (jsonSchema) {
      // Mutations from hostile-inputs: a field replaced by a hostile value, removed, or a hostile key added.
      cases.push(
        fc.tuple(arbitraryFor(jsonSchema, options), fc.integer()).map(([body, seed]) => {
          const mutated = mutate(body, new SeededRandom(seed));
          return { label: `mutated body: ${mutated.label}`, contentType: json, body: JSON.stringify(mutated.value) } as Pick<FuzzRequest, 'label' | 'contentType' | 'body'>;
        }),
      );
    }
    return fc.oneof(...cases);
  }

  async function send(operation: DocumentOperation, request: FuzzRequest): Promise<Answer> {
    const path = operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) => request.path[name] ?? 'missing');
    const query = request.query.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&');
    const headers: Record<string, string> = {};
    if (request.authorization === undefined) headers.authorization = `Bearer ${bearer}`;
    else if (request.authorization !== null) headers.authorization = request.authorization;
    let body: BodyInit | undefined;
    if (typeof request.body === 'string') body = request.body;
    else if (request.body && 'bytes' in request.body) body = new Uint8Array(request.body.bytes);
    else if (request.body && 'form' in request.body) {
      const form = new FormData();
      for (const [name, value] of request.body.form) {
        if (typeof value === 'string') form.append(name, value);
        else form.append(name, new Blob([new Uint8Array(value.file)], { type: value.type }), 'upload.bin');
      }
      body = form;
    }
    // A form body sets its own Content-Type with the boundary.
    if (request.contentType !== undefined && !(body instanceof FormData)) headers['content-type'] = request.contentType;
    const response = await fetch(`${server.url}${path}${query ? `?${query}` : ''}`, { method: operation.method, headers, body });
    // An event stream's answer is checked on its head and first chunk: the stream itself never ends.
    const text = await answerText(response);
    return { status: response.status, contentType: response.headers.get('content-type') ?? '', text };
  }

  /** What in the answer the document does not declare for the operation. */
  function check(operation: DocumentOperation, request: FuzzRequest, answer: Answer): Violation[] {
    const violation = (problem: string): Violation[] => [{ operation: operation.key, status: answer.status, problem }];
    const declared = operation.operation.responses[String(answer.status)] ?? operation.operation.responses.default;
    const server = answer.status >= 500 ? violation('a 5xx: no input may produce one') : [];
    if (request.mustRefuse && answer.status < 400) server.push(...violation(`accepted a request the document does not allow: ${request.mustRefuse}`));
    if (!declared) return [...server, ...violation(`status ${answer.status} is not declared (declared: ${Object.keys(operation.operation.responses).join(', ')})`)];
    const status = operation.operation.responses[String(answer.status)] ? String(answer.status) : 'default';
    const { response, pointer } = resolveResponse(document, declared, [...operation.pointer, 'responses', status]);
    const media = essence(answer.contentType);
    const contents = Object.keys(response.content ?? {});
    if (contents.length === 0) return answer.text.length === 0 ? server : [...server, ...violation(`a body (${media}) where none is declared`)];
    if (answer.text.length === 0) return [...server, ...violation(`no body where ${contents.join(' or ')} is declared`)];
    const range = contents.find((candidate) => mediaTypeMatches(candidate, media));
    if (!range) return [...server, ...violation(`content type '${answer.contentType}' is not declared (declared: ${contents.join(', ')})`)];
    if (media !== 'application/json' && !media.endsWith('+json')) return server;
    if (!response.content![range]!.schema) return server;
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return [...server, ...violation('a JSON content type with a body that is not JSON')];
    }
    const validate = validator.at([...pointer, 'content', range, 'schema']);
    if (!validate(body)) return [...server, ...violation(`the body does not match the declared schema: ${validator.errorsText(validate)}`)];
    return server;
  }
});
