import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { ContainerModule } from 'inversify';
import { Clock, Logger } from '../packages/core/src/index';
import { SystemClock } from '../packages/core/src/node';
import { listen } from '../packages/server-adapter/src/serve';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { startCallbackReceiver } from './support/callback-sink';
import { createAccountRecords } from './support/account-records';
import { startTestRunloom, TEST_ORIGIN, type TestRunloom } from './support/harness';
import {
  hostileQueryValues,
  hostileSegments,
  MALFORMED_JSON,
  multipart,
  nested,
  nestedObject,
  tokenCases,
  withHugeString,
  WRONG_TOP_LEVEL,
} from './support/hostile-inputs';
import { HOSTILE_VALUES, mutate, sampleFromSchema } from './support/json-schema-sample';
import { documentsObjectError, fillPath, isIdParam, jsonBodySchema, recordKindOf, requiredQueryOf, routeCatalog, type CatalogRoute } from './support/route-catalog';
import { SeededRandom } from './support/seeded-random';
import { waitUntil } from './support/wait';

/**
 * Product rule (docs/api.md#conventions): bad input gets a clear 4xx and no input produces a 5xx, a crash, a
 * stack trace or a secret. Every route the router serves is sent a bounded, seeded set of hostile
 * requests; the `it`s below each check one property over all the answers.
 */

/** Override with RUNLOOM_FUZZ_SEED to explore; a failure message names the seed that reproduces it. */
const SEED = Number(process.env.RUNLOOM_FUZZ_SEED ?? 0x5eed5);
/** Bearer and method cases, then up to 12 path, 12 query and 5 header cases; bodies fill the rest. */
const CASES_PER_ROUTE = 80;
const REQUEST_TIMEOUT_MS = 10_000;
/** Answers are read up to this many bytes (an event stream never ends). */
const READ_LIMIT_BYTES = 256 * 1024;
const UPLOAD_LIMIT_BYTES = 256 * 1024;
const ACCOUNT = 'acct-a';

/** `at fn (file:1:2)` frames, source paths with line numbers, Node internals. */
const STACK_TRACE = /\bat [^\s"]+ \(|\bat (?:file|node):|\.[cm]?[jt]s:\d+|node:internal|node_modules\//;

interface HostileCase {
  label: string;
  method: string;
  /** Path and query, relative to the origin (the base path is added when sent). */
  target: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
  /** undefined: a valid bearer of ACCOUNT; null: no Authorization header; a string: that header. */
  authorization?: string | null;
  /** A missing, malformed, forged or expired bearer on a protected route: 401 (docs/api.md#authentication). */
  expectUnauthorized?: boolean;
  /** A body case kept when the route's cases are cut down to CASES_PER_ROUTE. */
  always?: boolean;
  /** Sent this many times at once (races between identical requests). */
  copies?: number;
}

interface Exchange {
  route: CatalogRoute;
  hostile: HostileCase;
  status: number;
  contentType: string;
  headers: string;
  text: string;
  /** Why no answer came (a timeout or a thrown error), when none did. */
  failure?: string;
}

/** Records what the service logs, to search it for secrets. */
class RecordingLogger implements Logger {
  readonly lines: string[] = [];
  /** The fields of every line, to find requests answered with a 5xx no client saw (cut-off bodies). */
  readonly entries: Record<string, unknown>[] = [];
  info(fields: Record<string, unknown>, message: string): void {
    this.record('info', fields, message);
  }
  warn(fields: Record<string, unknown>, message: string): void {
    this.record('warn', fields, message);
  }
  error(fields: Record<string, unknown>, message: string): void {
    this.record('error', fields, message);
  }
  private record(level: string, fields: Record<string, unknown>, message: string): void {
    this.lines.push(`${level} ${message} ${safeStringify(fields)}`);
    this.entries.push(fields);
  }
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, item: unknown) => (item instanceof Error ? { message: item.message, stack: item.stack } : item));
  } catch {
    return String(value);
  }
}

/** The system clock, shifted on demand: tokens minted in the past are expired now. */
class ShiftableClock extends SystemClock {
  offsetMs = 0;
  override now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}

describe('no input produces a 5xx (every route, hostile input)', function () {
  this.timeout(120_000);

  const logger = new RecordingLogger();
  const clock = new ShiftableClock();
  const random = new SeededRandom(SEED);
  const exchanges: Exchange[] = [];
  const crashes: string[] = [];
  const onCrash = (error: unknown): void => {
    crashes.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  };
  /** Secret values that no answer and no log may contain, by what they are. */
  const secrets = new Map<string, string>();
  /** The webhook secret is answered by its own two routes only. */
  const webhookSecrets = new Set<string>();
  let t: TestRunloom;
  let catalog: CatalogRoute[];
  let openApiOperations = 0;
  let vendor: FakeVendorServer;
  /** Refuses the planted anthropic key (401, which is not retried), so runs on it fail at once. */
  let refusingVendor: FakeVendorServer;
  let receiver: Awaited<ReturnType<typeof startCallbackReceiver>>;

  before(async () => {
    process.on('unhandledRejection', onCrash);
    process.on('uncaughtException', onCrash);
    vendor = await startFakeVendor('openai');
    refusingVendor = await startFakeVendor('anthropic');
    receiver = await startCallbackReceiver();
    const secretKey = randomBytes(32).toString('base64');
    secrets.set('config secretKey', secretKey);
    t = await startTestRunloom({
      allowPrivateNetwork: true,
      rateLimit: 0,
      uploadLimitBytes: UPLOAD_LIMIT_BYTES,
      callbackMaxAttempts: 1,
      callbackInitialBackoffMs: 10,
      secretKey,
      modules: [
        new ContainerModule(({ rebind }) => {
          rebind(Logger).toConstantValue(logger);
          rebind(Clock).toConstantValue(clock);
        }),
      ],
    });
    const json = (method: string, body: unknown): RequestInit => ({ method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    // Planted secrets: a client secret, provider keys (one accepted, one refused, one unreachable), callback header values.
    const client = await t.runloom.auth.createClient(ACCOUNT);
    secrets.set('client secret', client.client_secret);
    const callbackValue = `cb-${randomBytes(12).toString('hex')}`;
    secrets.set('callback header value', callbackValue);
    const records = await createAccountRecords(t, {
      account: ACCOUNT,
      vendor,
      callback: { url: receiver.url, headers: { 'x-callback-token': callbackValue } },
    });
    secrets.set('openai api key', vendor.credentials.api_key!);
    const anthropicKey = `sk-ant-api03-${randomBytes(16).toString('hex')}`;
    secrets.set('anthropic api key', anthropicKey);
    const bedrockSecret = randomBytes(24).toString('base64url');
    secrets.set('bedrock secret access key', bedrockSecret);
    for (const [provider, credentials] of [
      ['anthropic', { api_key: anthropicKey, base_url: refusingVendor.baseUrl }],
      ['aws-bedrock', { region: 'us-east-1', access_key_id: 'AKIAPLANTEDKEY000001', secret_access_key: bedrockSecret, base_url: 'http://127.0.0.1:1' }],
    ] as const) {
      const put = await t.request(`/v1/llm-provider/${provider}`, json('PUT', { enabled: true, credentials }));
      assert.equal(put.status, 201, await put.text());
    }
    // A run that fails calling a provider whose key is planted: its error is answered on GET /v1/run/{id}.
    const refused = await t.request(
      '/v1/runnables',
      json('POST', { name: 'refused', config_content_parsed: { prompt: { messages: [{ role: 'user', content: 'hi' }] }, llms: [{ model: `anthropic/${refusingVendor.model}` }] } }),
    );
    assert.equal(refused.status, 201, await refused.clone().text());
    const refusedId = ((await refused.json()) as { id: string }).id;
    const failed = await t.request(
      `/v1/runnable/${refusedId}/runs?mode=sync`,
      json('POST', { callback_url: receiver.url, callback_headers: { authorization: `Bearer ${callbackValue}` } }),
    );
    assert.equal(failed.status, 200, await failed.clone().text());
    const failedRun = (await failed.json()) as { id: string; status: string };
    assert.equal(failedRun.status, 'failed');
    const webhook = (await (await t.request('/v1/webhook-secret')).json()) as { secret: string };
    webhookSecrets.add(webhook.secret);

    // An expired token: minted two TTLs ago on the shifted clock.
    clock.offsetMs = -2 * t.runloom.config.tokenTtlSeconds * 1000;
    const expired = await t.runloom.auth.issueToken({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret });
    clock.offsetMs = 0;
    const valid = await t.token(ACCOUNT);
    const jwks = (await (await t.request('/.well-known/jwks.json')).json()) as { keys: { x: string }[] };
    const tokens = tokenCases(valid, expired.access_token, jwks.keys[0]!.x);

    const known = new Map<string, string[]>([
      ['runnable', [records.runnable, refusedId]],
      ['run', [records.run, failedRun.id]],
      ['resource', [records.resource]],
      ['gold_label', [records.gold_label]],
    ]);
    const allKnown = [...known.values()].flat();
    /** Valid bodies to mutate, beyond the samples of each route's schema. */
    const runnableSeed = {
      name: 'seeded',
      description: 'a runnable to mutate',
      tags: ['seed'],
      config_content_parsed: {
        prompt: { system: 'Be brief.', messages: [{ role: 'user', content: 'Summarize {{document}}' }] },
        llms: [{ model: `openai/${vendor.model}` }],
        inputs: [{ name: 'document', mime_types: ['text/plain'] }],
      },
    };
    const seeds: Record<string, unknown[]> = {
      'POST /v1/runnables': [runnableSeed, { name: 'yaml', config_content: 'type: flow\nsteps:\n  - id: a\n    uses: {transform: template, template: hi}\n' }],
      'PATCH /v1/runnable/{id}': [runnableSeed, { description: null, tags: [] }],
      'POST /v1/runnable/{id}/runs': [
        { resources: [{ name: 'document', resource: records.resource }], timeout_seconds: 5, telemetry_strategy: 'force' },
        { resources: [{ name: 'document', resource: { id: records.resource } }], callback_url: receiver.url, callback_headers: { 'x-seed': 'value' } },
      ],
      'PUT /v1/llm-provider/{provider}': [{ enabled: false, credentials: {} }, { enabled: true, credentials: { api_key: 'sk-seed-value-0000', base_url: 'http://127.0.0.1:1' } }],
      'POST /v1/run/{run_id}/gold-labels': [{ output_resource_name: 'output', text_value: 'expected' }, { output_resource_name: 'output', object_value: { a: 1 }, object_value_is_partial: true }],
      'PATCH /v1/run/{run_id}/gold-label/{gold_label_id}': [{ text_value: null, object_value: { b: [1, 2] } }],
      'PATCH /v1/resource/{id}': [{ name: 'renamed.txt', directory_path: '/x', tags: ['a'], metadata: { k: { v: 1 } }, external_storage_type: 's3' }],
    };

    const read = await routeCatalog(t);
    catalog = read.routes;
    openApiOperations = Object.values(read.document.paths as Record<string, object>).reduce((count, operations) => count + Object.keys(operations).length, 0);
    // Destructive routes last, so the records stay for the routes before them.
    const ordered = [...catalog].sort((a, b) => Number(a.definition.method === 'DELETE') - Number(b.definition.method === 'DELETE'));

    for (const route of ordered) {
      const cases = casesFor(route, { known, allKnown, tokens, seeds: seeds[route.key] ?? [], plantedClientId: client.client_id });
      for (const hostile of cases) {
        if (hostile.copies) exchanges.push(...(await Promise.all(Array.from({ length: hostile.copies }, () => send(route, hostile)))));
        else exchanges.push(await send(route, hostile));
      }
    }
    // Once the runs the cases queued have ended, every listing and every run is read back: their
    // errors, outputs and callback states are answers too.
    await runsEnded();
    const sweep = (route: CatalogRoute, target: string): Promise<Exchange> => send(route, { label: 'read back after the cases', method: 'GET', target });
    for (const route of catalog.filter((candidate) => candidate.definition.method === 'GET' && candidate.pathParams.length === 0)) {
      exchanges.push(await sweep(route, route.definition.path));
    }
    const readRun = catalog.find((route) => route.key === 'GET /v1/run/{id}');
    if (readRun) for (const run of await listRuns('')) exchanges.push(await sweep(readRun, `/v1/run/${run.id}`));
    // Webhook secrets answered while the cases ran (rotations) are secrets everywhere else.
    for (const exchange of exchanges) {
      if (!exchange.route.definition.path.startsWith('/v1/webhook-secret') || exchange.status !== 200) continue;
      webhookSecrets.add((JSON.parse(exchange.text) as { secret: string }).secret);
    }
  });

  after(async () => {
    process.off('unhandledRejection', onCrash);
    process.off('uncaughtException', onCrash);
    await t?.close();
    await vendor?.close();
    await refusingVendor?.close();
    await receiver?.close();
  });

  async function listRuns(query: string): Promise<{ id: string }[]> {
    const response = await t.request(`/v1/runs?limit=500&${query}`);
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as { id: string }[];
  }

  /** Waits until no run of the account is queued or running. */
  async function runsEnded(): Promise<void> {
    await waitUntil(async () => {
      const [queued, running] = await Promise.all([listRuns('status=queued'), listRuns('status=running')]);
      return queued.length + running.length === 0;
    }, 'the runs submitted by the cases to end', 20_000);
  }

  interface CaseContext {
    known: Map<string, string[]>;
    allKnown: string[];
    tokens: Array<[string, string | null]>;
    seeds: unknown[];
    plantedClientId: string;
  }

  /** The bounded, seeded hostile requests for one route. */
  function casesFor(route: CatalogRoute, context: CaseContext): HostileCase[] {
    const { definition, operation } = route;
    const validPath = (): Record<string, string> =>
      Object.fromEntries(
        route.pathParams.map((name) => {
          const schema = operation?.parameters?.find((parameter) => parameter.in === 'path' && parameter.name === name)?.schema;
          if (Array.isArray(schema?.enum)) return [name, encodeURIComponent(String(random.pick(schema.enum)))];
          return [name, random.pick(context.known.get(recordKindOf(definition.path, name)) ?? context.allKnown)];
        }),
      );
    const queryParams = operation?.parameters?.filter((parameter) => parameter.in === 'query') ?? [];
    const idFor = (property: string): string | undefined =>
      isIdParam(property) ? random.pick(context.known.get(recordKindOf(definition.path, property)) ?? context.allKnown) : undefined;
    /** Required query parameters, and each optional one half the time, with values of their schema. */
    const validQuery = (): string =>
      queryParams
        .filter((parameter) => parameter.required || random.chance(0.5))
        .map((parameter) => `${parameter.name}=${encodeURIComponent(String(idFor(parameter.name) ?? sampleFromSchema(parameter.schema, random)))}`)
        .join('&');
    const target = (path: Record<string, string> = validPath(), query = validQuery()): string =>
      `${fillPath(definition.path, path)}${query ? `?${query}` : ''}`;
    const method = definition.method;
    const cases: HostileCase[] = [];
    const jsonCase = (label: string, body: string | undefined, contentType: string | undefined = 'application/json', always = false): void => {
      cases.push({
        label,
        method,
        target: target(),
        headers: contentType === undefined ? {} : { 'content-type': contentType },
        ...(body === undefined ? {} : { body }),
        always,
      });
    };

    const fixed: HostileCase[] = [];
    for (const [label, authorization] of context.tokens) {
      fixed.push({ label: `token: ${label}`, method, target: target(), authorization, expectUnauthorized: !definition.public });
    }
    // Methods no route serves on this path (405; HEAD is served wherever GET is); the others are their own routes' cases.
    const served = new Set(catalog.filter((other) => other.definition.path === definition.path).map((other) => other.definition.method));
    const unserved = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((name) => !served.has(name as typeof method));
    for (const other of ['OPTIONS', 'PROPFIND', ...(served.has('GET') ? [] : ['HEAD']), ...unserved]) {
      fixed.push({ label: `method ${other}`, method: other, target: target() });
    }

    const pathCases: HostileCase[] = [];
    for (const name of route.pathParams) {
      const valid = validPath();
      for (const [label, segment] of hostileSegments(random, valid[name]!)) {
        pathCases.push({ label: `path {${name}}: ${label}`, method, target: target({ ...valid, [name]: segment }) });
      }
    }

    const queryCases: HostileCase[] = [];
    for (const parameter of queryParams) {
      for (const [label, value] of hostileQueryValues(parameter.schema)) {
        queryCases.push({ label: `query ${parameter.name}: ${label}`, method, target: target(undefined, `${parameter.name}=${value}`) });
      }
      queryCases.push({ label: `query ${parameter.name}: repeated`, method, target: target(undefined, `${parameter.name}=a&${parameter.name}=1&${parameter.name}=`) });
      queryCases.push({ label: `query ${parameter.name}: bracket syntax`, method, target: target(undefined, `${parameter.name}[]=1&${parameter.name}[a]=2`) });
    }
    for (const [label, query] of [
      ['prototype keys', '__proto__[polluted]=1&constructor[prototype][polluted]=1&__proto__=x'],
      ['garbage escapes', '%=&%zz=%zz&&&=&%00=%00'],
      ['200 KB of parameters', Array.from({ length: 10_000 }, (_, index) => `p${index}=${index}`).join('&')],
    ] as const) {
      queryCases.push({ label: `query: ${label}`, method, target: target(undefined, [validQuery(), query].filter(Boolean).join('&')) });
    }

    // Conditional and range headers reach downloads; the others every route.
    const headerCases: HostileCase[] = [
      ['range', 'bytes=abc'],
      ['range', 'bytes=5-1'],
      ['range', 'bytes=-0'],
      ['range', `bytes=${'9'.repeat(30)}-`],
      ['range', 'bytes=0-1,2-3,4-5'],
      ['range', 'items=0-1'],
      ['if-none-match', '"unterminated'],
      ['if-none-match', `${'W/"x", '.repeat(2000)}*`],
      ['if-range', 'Thu, 01 Jan 1970 00:00:00 GMT'],
      ['if-range', '"not-the-etag"'],
      ['x-request-id', 'has spaces and ünïcode'],
      ['x-request-id', 'x'.repeat(10_000)],
      ['accept', 'application/xml;q=1, */*;q=0'],
      ['content-length', '-1'],
      ['content-length', 'abc'],
    ].map(([name, value]) => ({ label: `header ${name}: ${value!.slice(0, 40)}`, method, target: target(), headers: { [name!]: value! } }));
    const body = definition.body;
    if (!body) {
      if (method !== 'GET') jsonCase('body where none is read', '{"unexpected":true}');
    } else if ('json' in body) {
      const schema = jsonBodySchema(route);
      const samples = [0, 1, 2].map(() => sampleFromSchema(schema, random, { idFor }));
      const seeds = [...context.seeds, ...samples];
      const seed = (): unknown => random.pick(seeds);
      const objectSeed = (): Record<string, unknown> => {
        const value = seed();
        return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
      };
      for (const text of MALFORMED_JSON) jsonCase(`malformed JSON ${JSON.stringify(text.slice(0, 20))}`, text, 'application/json', text === '{');
      for (const text of WRONG_TOP_LEVEL) jsonCase(`top-level ${text}`, text, 'application/json', text === '[]');
      jsonCase('empty body', '');
      jsonCase('no body', undefined);
      cases.push({ label: 'content-length 0', method, target: target(), headers: { 'content-type': 'application/json', 'content-length': '0' } });
      for (const type of [
        'text/plain',
        'application/xml',
        'application/json; charset=utf-16',
        'application/vnd.api+json',
        'multipart/form-data; boundary=x',
        'application/x-www-form-urlencoded',
        'APPLICATION/JSON',
        'application/json;;;',
        'json',
      ]) {
        jsonCase(`content-type ${type}`, JSON.stringify(seed()), type);
      }
      jsonCase('no content-type', JSON.stringify(seed()), undefined);
      jsonCase('form body', 'a=1&b=%zz&__proto__[x]=1&enabled=true&name=x', 'application/x-www-form-urlencoded');
      jsonCase('nested 65 deep', nested(65));
      jsonCase('nested 10 000 deep', nested(10_000), 'application/json', true);
      jsonCase('a field nested 63 deep', JSON.stringify({ ...objectSeed(), metadata: nestedObject(62), object_value: nestedObject(62) }));
      jsonCase('a field nested 10 000 deep', `{"name":"x","metadata":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`);
      jsonCase('a string just under the limit', withHugeString(seed(), t.runloom.config.jsonBodyLimitBytes - 16));
      jsonCase('a string over the limit', withHugeString(seed(), t.runloom.config.jsonBodyLimitBytes + 1), 'application/json', true);
      jsonCase('100 000 keys', `{${Array.from({ length: 100_000 }, (_, index) => `"k${index}":${index}`).join(',')}}`);
      jsonCase('prototype pollution keys', `{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},${JSON.stringify({ ...objectSeed(), seeded: true }).slice(1)}`, 'application/json', true);
      for (const sample of samples) jsonCase('valid-shaped sample', JSON.stringify(sample));
      for (const value of context.seeds) jsonCase('seed', JSON.stringify(value));
      for (let round = 0; round < 14; round++) {
        const mutated = mutate(seed(), random);
        jsonCase(`mutated: ${mutated.label}`, JSON.stringify(mutated.value));
      }
      const properties = Object.keys((schema?.properties ?? {}) as object);
      for (const name of properties) {
        for (const [label, value] of random.sample(HOSTILE_VALUES, 2)) {
          jsonCase(`${name}: ${label}`, JSON.stringify({ ...objectSeed(), [name]: value }));
        }
      }
      for (const name of (schema?.required ?? []) as string[]) {
        const { [name]: _dropped, ...rest } = objectSeed();
        jsonCase(`missing required ${name}`, JSON.stringify(rest));
      }
      jsonCase('unicode and NUL everywhere', JSON.stringify(seed()).replace(/"([^"\\]*)"(?!:)/g, '"$1\\u0000\\ud800\\u202e💩"'));
    } else {
      cases.push(...streamCases(route, target, context));
    }

    // The same valid-shaped request eight times at once: races must end in 2xx, 404 or 409.
    const racing = cases.find((hostile) => hostile.label === 'seed' || hostile.label === 'valid-shaped sample');
    fixed.push({ ...(racing ?? { label: 'valid', method, target: target() }), label: `8 at once: ${racing?.label ?? 'valid'}`, copies: 8 });

    const chosen = [
      ...fixed,
      ...random.sample(pathCases, 12),
      ...random.sample(queryCases, 12),
      ...random.sample(headerCases, 5),
      ...cases.filter((hostile) => hostile.always),
    ];
    return [...chosen, ...random.sample(cases.filter((hostile) => !hostile.always), Math.max(0, CASES_PER_ROUTE - chosen.length))];
  }

  /** Bodies for routes that read their own body (uploads, the token endpoint), by the media types they take. */
  function streamCases(route: CatalogRoute, target: () => string, context: CaseContext): HostileCase[] {
    const { method } = route.definition;
    const spec = route.definition.body as { stream: { mediaTypes: string[] } };
    const limit = t.runloom.config.jsonBodyLimitBytes;
    const cases: HostileCase[] = [];
    const add = (label: string, contentType: string | undefined, body: string | Uint8Array<ArrayBuffer> | undefined, extra: Partial<HostileCase> = {}): void => {
      cases.push({ label, method, target: target(), headers: contentType === undefined ? {} : { 'content-type': contentType }, ...(body === undefined ? {} : { body }), ...extra });
    };
    add('no content-type, no body', undefined, undefined);
    add('unlisted content-type', 'application/x-unknown-thing', 'x');
    for (const type of spec.stream.mediaTypes) {
      if (type === 'multipart/form-data') {
        const file = 'Content-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello';
        add('multipart without a boundary', 'multipart/form-data', 'garbage');
        add('multipart with a wrong boundary', 'multipart/form-data; boundary=b', multipart('other', [file]));
        add('multipart truncated', 'multipart/form-data; boundary=b', multipart('b', [file]).slice(0, 60));
        add('multipart with no file part', 'multipart/form-data; boundary=b', multipart('b', ['Content-Disposition: form-data; name="name"\r\n\r\nx']));
        add('multipart with two file parts', 'multipart/form-data; boundary=b', multipart('b', [file, file]), { always: true });
        add('multipart file part under another name', 'multipart/form-data; boundary=b', multipart('b', [file.replace('name="file"', 'name="other"')]));
        add(
          'multipart with hostile fields',
          'multipart/form-data; boundary=b',
          multipart('b', [
            'Content-Disposition: form-data; name="__proto__"\r\n\r\n{"polluted":true}',
            'Content-Disposition: form-data; name="metadata"\r\n\r\n[1,2',
            'Content-Disposition: form-data; name="tags"\r\n\r\n["a",',
            `Content-Disposition: form-data; name="name"\r\n\r\n${'n'.repeat(5000)}`,
            'Content-Disposition: form-data; name="external_storage_type"\r\n\r\nftp',
            file.replace('filename="a.txt"', 'filename="../../etc/passwd\u0000.txt"'),
          ]),
        );
        add('multipart over the upload limit', 'multipart/form-data; boundary=b', multipart('b', [`${file}${'x'.repeat(UPLOAD_LIMIT_BYTES + 1)}`]), { always: true });
        add('multipart field over the JSON limit', 'multipart/form-data; boundary=b', multipart('b', [`Content-Disposition: form-data; name="name"\r\n\r\n${'n'.repeat(limit + 1)}`, file]));
      } else if (type === 'application/json') {
        for (const text of ['{', '[]', 'null', '"x"', '{"grant_type":1,"client_id":[],"client_secret":{}}', '{"__proto__":{"polluted":true},"grant_type":"client_credentials"}']) {
          add(`JSON ${text.slice(0, 30)}`, type, text);
        }
        add('JSON over the limit', type, `{"a":"${'x'.repeat(limit)}"}`, { always: true });
        add('JSON nested 10 000 deep', type, nested(10_000));
        add('JSON with an unknown client', type, JSON.stringify({ grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'wrong' }));
        add('JSON with a wrong secret', type, JSON.stringify({ grant_type: 'client_credentials', client_id: context.plantedClientId, client_secret: 'wrong' }));
        add('JSON with another grant type', type, JSON.stringify({ grant_type: 'password', username: 'a', password: 'b' }));
      } else if (type === 'application/x-www-form-urlencoded') {
        for (const text of ['grant_type=client_credentials&grant_type=client_credentials', '%zz=%zz', '__proto__[polluted]=1', 'grant_type', '&&&', `client_id=${'a'.repeat(100_000)}`]) {
          add(`form ${text.slice(0, 30)}`, type, text);
        }
        add('form with a wrong secret', type, `grant_type=client_credentials&client_id=${encodeURIComponent(context.plantedClientId)}&client_secret=wrong`);
        add('form over the limit', type, `grant_type=${'x'.repeat(limit + 1)}`);
        for (const [label, authorization] of [
          ['Basic garbage', 'Basic !!!'],
          ['Basic without a colon', `Basic ${Buffer.from('nocolon').toString('base64')}`],
          ['Basic with bad escapes', `Basic ${Buffer.from('%zz:%zz').toString('base64')}`],
          ['Basic with invalid UTF-8', `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0xff]).toString('base64')}`],
          ['Basic with a wrong secret', `Basic ${Buffer.from(`${encodeURIComponent(context.plantedClientId)}:wrong`).toString('base64')}`],
        ] as const) {
          add(`form, ${label}`, type, 'grant_type=client_credentials', { authorization });
        }
      } else {
        const concrete = type === '*/*' ? 'application/octet-stream' : type.replace('/*', '/plain');
        add(`${concrete}: empty`, concrete, '');
        add(`${concrete}: binary`, concrete, new Uint8Array(randomBytes(512)));
        add(`${concrete}: over the upload limit`, concrete, new Uint8Array(UPLOAD_LIMIT_BYTES + 1), { always: true });
        add(`${concrete}: declared over the upload limit`, concrete, 'x', { headers: { 'content-type': concrete, 'content-length': String(UPLOAD_LIMIT_BYTES + 1) } });
        add(`${concrete}: hostile content-type parameters`, `${concrete}; charset="utf-42"; boundary=; ;=`, 'x');
        add(`${concrete}: content-type that is not a media type`, 'not a media type at all', 'x');
      }
    }
    return cases;
  }

  async function send(route: CatalogRoute, hostile: HostileCase): Promise<Exchange> {
    const headers = new Headers(hostile.headers);
    if (hostile.authorization === undefined) headers.set('authorization', `Bearer ${await t.token(ACCOUNT)}`);
    else if (hostile.authorization !== null) headers.set('authorization', hostile.authorization);
    const exchange: Exchange = { route, hostile, status: 0, contentType: '', headers: '', text: '' };
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const request = new Request(`${TEST_ORIGIN}${t.runloom.config.basePath}${hostile.target}`, {
        method: hostile.method,
        headers,
        ...(hostile.body === undefined || hostile.method === 'GET' ? {} : { body: hostile.body }),
      });
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS);
      });
      const response = await Promise.race([t.runloom.handle(request), timeout]);
      exchange.status = response.status;
      exchange.contentType = response.headers.get('content-type') ?? '';
      const lines: string[] = [];
      response.headers.forEach((value, name) => lines.push(`${name}: ${value}`));
      exchange.headers = lines.join('\n');
      exchange.text = await Promise.race([readBounded(response), timeout]);
    } catch (error) {
      exchange.failure = error instanceof Error ? error.message : String(error);
    } finally {
      clearTimeout(timer);
    }
    return exchange;
  }

  function describeExchange(exchange: Exchange): string {
    const { route, hostile } = exchange;
    const answer = exchange.failure ?? `${exchange.status} ${exchange.text.slice(0, 160)}`;
    return `${route.key} [${hostile.label}] ${hostile.method} ${hostile.target.slice(0, 120)} → ${answer}`;
  }

  function assertNone(failing: Exchange[], what: string): void {
    const lines = failing.slice(0, 25).map(describeExchange);
    const more = failing.length > lines.length ? `\n… and ${failing.length - lines.length} more` : '';
    assert.equal(failing.length, 0, `${failing.length} answers ${what} (seed ${SEED}):\n${lines.join('\n')}${more}`);
  }

  if (process.env.RUNLOOM_FUZZ_REPORT) {
    after(() => {
      const byRoute = new Map<string, Map<number, number>>();
      for (const exchange of exchanges) {
        const counts = byRoute.get(exchange.route.key) ?? new Map<number, number>();
        counts.set(exchange.status, (counts.get(exchange.status) ?? 0) + 1);
        byRoute.set(exchange.route.key, counts);
      }
      for (const [key, counts] of byRoute) console.log(key, JSON.stringify(Object.fromEntries(counts)));
    });
  }

  it('sends every registered route (and every OpenAPI operation) a bounded set of hostile requests', () => {
    const visible = catalog.filter((route) => !route.definition.hidden);
    assert.equal(visible.filter((route) => route.operation).length, visible.length, 'every visible route has an OpenAPI operation');
    assert.equal(openApiOperations, visible.length, 'the OpenAPI document has no operation the router does not serve');
    for (const route of catalog) {
      const count = exchanges.filter((exchange) => exchange.route === route).length;
      assert.ok(count >= 20 && count <= CASES_PER_ROUTE + 8, `${route.key}: ${count} cases`);
    }
  });

  it('answers every hostile request, below 500 (501 only where a route documents it)', () => {
    assertNone(
      exchanges.filter((exchange) => exchange.failure !== undefined || (exchange.status >= 500 && !(exchange.status === 501 && exchange.route.definition.responses[501]))),
      'with a 5xx or not at all',
    );
  });

  it('answers every 4xx with a JSON body whose error says what to fix', () => {
    assertNone(
      exchanges.filter((exchange) => {
        if (exchange.status < 400 || exchange.status >= 500) return false;
        // An answer to HEAD has the headers of one to GET, and no body to read an error from.
        if (exchange.hostile.method === 'HEAD') return false;
        if (!exchange.contentType.startsWith('application/json')) return true;
        let body: { error?: unknown };
        try {
          body = JSON.parse(exchange.text) as { error?: unknown };
        } catch {
          return true;
        }
        if (typeof body.error === 'string') return body.error.length === 0;
        const error = body.error as { code?: unknown; message?: unknown } | undefined;
        return !(documentsObjectError(exchange.route, exchange.status) && typeof error?.code === 'string' && typeof error.message === 'string');
      }),
      'with a 4xx that is not JSON {error: string}',
    );
  });

  it('answers a missing, malformed, forged or expired bearer on a protected route with 401 and WWW-Authenticate', () => {
    assertNone(
      exchanges.filter((exchange) => exchange.hostile.expectUnauthorized && (exchange.status !== 401 || !/www-authenticate: Bearer/i.test(exchange.headers))),
      'to a bad bearer without 401',
    );
  });

  it('never answers a stack trace or a source path', () => {
    assertNone(
      exchanges.filter((exchange) => STACK_TRACE.test(exchange.text) || STACK_TRACE.test(exchange.headers)),
      'with a stack trace',
    );
  });

  it('never answers a planted secret (client secret, provider keys, callback header values, the webhook secret elsewhere)', () => {
    assert.ok(secrets.size >= 6 && webhookSecrets.size >= 1);
    assertNone(
      exchanges.filter((exchange) => {
        const answer = `${exchange.headers}\n${exchange.text}`;
        if ([...secrets.values()].some((secret) => answer.includes(secret))) return true;
        return !exchange.route.definition.path.startsWith('/v1/webhook-secret') && [...webhookSecrets].some((secret) => answer.includes(secret));
      }),
      'containing a planted secret',
    );
  });

  it('never logs a planted secret', () => {
    assert.ok(logger.lines.length > 0, 'requests are logged');
    const leaks = logger.lines.filter((line) => [...secrets.values(), ...webhookSecrets].some((secret) => line.includes(secret)));
    assert.deepEqual(leaks.map((line) => line.slice(0, 300)), []);
  });

  it('answers a body cut off before its end with 400, not 500, on every route that reads one', async () => {
    const answers: string[] = [];
    for (const route of catalog.filter((candidate) => candidate.definition.body)) {
      const path = Object.fromEntries(
        route.pathParams.map((name) => {
          const schema = route.operation?.parameters?.find((parameter) => parameter.in === 'path' && parameter.name === name)?.schema;
          return [name, Array.isArray(schema?.enum) ? String(schema.enum[0]) : random.uuid(7)];
        }),
      );
      const spec = route.definition.body!;
      const contentType = 'json' in spec ? 'application/json' : spec.stream.mediaTypes.includes('*/*') ? 'application/octet-stream' : spec.stream.mediaTypes[0]!;
      let sent = false;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent) controller.error(new Error('aborted'));
          else controller.enqueue(new TextEncoder().encode('{"name":"cut'));
          sent = true;
        },
      });
      const query = requiredQueryOf(route) || '?name=cut.bin';
      const response = await t.runloom.handle(
        new Request(`${TEST_ORIGIN}${t.runloom.config.basePath}${fillPath(route.definition.path, path)}${query}`, {
          method: route.definition.method,
          headers: { authorization: `Bearer ${await t.token(ACCOUNT)}`, 'content-type': contentType },
          body,
          duplex: 'half',
        } as RequestInit),
      );
      // A streamed body is the handler's to read, after its own checks: a public route's credential
      // (a signed upload URL, 403) or the record its path names (random ids here, 404) come first.
      const refusedBeforeReading = 'stream' in spec && ((route.definition.public && response.status === 403) || (route.pathParams.length > 0 && response.status === 404));
      if (refusedBeforeReading) {
        await response.body?.cancel();
        continue;
      }
      answers.push(`${route.key} ${response.status} ${await response.text()}`);
    }
    assert.ok(answers.length > 0);
    assert.deepEqual(answers.filter((answer) => !/^\S+ \S+ 400 \{"error":"[^"]*cut off/.test(answer)), []);
  });

  it('answers malformed HTTP through node:http below 500, and keeps serving', async () => {
    const server = await listen(t.runloom, { host: '127.0.0.1', port: 0, shutdownGraceMs: 1_000 });
    try {
      const { port } = server.server.address() as AddressInfo;
      const bearer = `Authorization: Bearer ${await t.token(ACCOUNT)}\r\n`;
      const json = 'Content-Type: application/json\r\n';
      // The cut-off requests never finish, so they get no answer; every other one must get one below 500.
      const cases: Array<[string, Array<string | Buffer>, 'answered' | 'cut off']> = [
        ['Host with a space', [`GET /v1/runnables HTTP/1.1\r\nHost: a b\r\n${bearer}\r\n`], 'answered'],
        ['Host with a path', [`GET /v1/runnables HTTP/1.1\r\nHost: evil.example/x?y\r\n${bearer}\r\n`], 'answered'],
        ['no Host', [`GET /v1/runnables HTTP/1.0\r\n${bearer}\r\n`], 'answered'],
        ['absolute-form target', [`GET http://evil.example/v1/runnables HTTP/1.1\r\nHost: x\r\n${bearer}\r\n`], 'answered'],
        ['asterisk target', ['OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n'], 'answered'],
        ['doubled slashes', [`GET //v1//runnables HTTP/1.1\r\nHost: x\r\n${bearer}\r\n`], 'answered'],
        ['raw bytes in the path', [Buffer.concat([Buffer.from('GET /v1/runnable/'), Buffer.from([0xff, 0xfe, 0x80]), Buffer.from(` HTTP/1.1\r\nHost: x\r\n${bearer}\r\n`)])], 'answered'],
        ['unknown method', [`BREW /v1/runnables HTTP/1.1\r\nHost: x\r\n${bearer}\r\n`], 'answered'],
        ['garbage chunk size', [`POST /v1/runnables HTTP/1.1\r\nHost: x\r\n${bearer}${json}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`], 'answered'],
        ['chunked body cut off', [`POST /v1/runnables HTTP/1.1\r\nHost: x\r\n${bearer}${json}Transfer-Encoding: chunked\r\n\r\n10\r\n{"name":`], 'cut off'],
        ['Content-Length and Transfer-Encoding', [`POST /v1/runnables HTTP/1.1\r\nHost: x\r\n${bearer}${json}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`], 'answered'],
        ['body shorter than Content-Length', [`POST /v1/runnables HTTP/1.1\r\nHost: x\r\n${bearer}${json}Content-Length: 100\r\n\r\n{"name":"x"`], 'cut off'],
        ['upload cut off', [`POST /v1/resources?name=a.bin HTTP/1.1\r\nHost: x\r\n${bearer}Content-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n${'x'.repeat(1000)}`], 'cut off'],
        [
          'form upload cut off',
          [`POST /v1/resources HTTP/1.1\r\nHost: x\r\n${bearer}Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n${'x'.repeat(1000)}`],
          'cut off',
        ],
        ['token request cut off', ['POST /auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 500\r\n\r\ngrant_type=client_cre'], 'cut off'],
        ['gzip that is not gzip', [`POST /v1/runnables HTTP/1.1\r\nHost: x\r\n${bearer}${json}Content-Encoding: gzip\r\nContent-Length: 4\r\n\r\n{}{}`], 'answered'],
        ['Expect: 100-continue', [`POST /v1/runnables HTTP/1.1\r\nHost: x\r\n${bearer}${json}Expect: 100-continue\r\nContent-Length: 2\r\n\r\n`, '{}'], 'answered'],
        ['a body on GET', [`GET /v1/runnables HTTP/1.1\r\nHost: x\r\n${bearer}Content-Length: 5\r\n\r\nhello`], 'answered'],
        ['header without a colon', [`GET /v1/runnables HTTP/1.1\r\nHost: x\r\nBroken header\r\n${bearer}\r\n`], 'answered'],
        ['64 KB of headers', [`GET /v1/runnables HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n${bearer}\r\n`], 'answered'],
        ['not HTTP at all', ['\u0000\u0001\u0002 hello\r\n\r\n'], 'answered'],
      ];
      const statuses: string[] = [];
      const unanswered: string[] = [];
      const cutOffIds: string[] = [];
      for (const [index, [label, given, expected]] of cases.entries()) {
        let parts = given;
        if (expected === 'cut off') {
          // Tagged, to find the request-log line the server writes once the client has gone.
          const requestId = `raw-cut-off-${index}`;
          cutOffIds.push(requestId);
          parts = given.map((part, at) => (at === 0 && typeof part === 'string' ? part.replace('\r\nHost: x\r\n', `\r\nHost: x\r\nX-Request-Id: ${requestId}\r\n`) : part));
          assert.notDeepEqual(parts, given, `${label} has a request id`);
        }
        const answered = await rawExchange(server.server, port, parts, expected, label);
        if (answered.length === 0 && expected === 'answered') unanswered.push(label);
        for (const status of answered) statuses.push(`${label}: ${status}`);
      }
      if (process.env.RUNLOOM_FUZZ_REPORT) console.log(statuses.join('\n'));
      assert.deepEqual(unanswered, [], 'every complete request gets an answer');
      assert.deepEqual(statuses.filter((entry) => /: 5\d\d$/.test(entry)), []);
      // A client that stops sending halfway gets no answer, but the server must not count a 5xx for it:
      // its request-log line, written once the server sees the client gone, is what to check.
      const logged = (): string[] => cutOffIds.filter((id) => logger.entries.some((entry) => entry.requestId === id));
      await waitUntil(() => logged().length === cutOffIds.length, `the request-log lines of the cut-off requests (logged: ${logged().join(', ') || 'none'})`);
      const serverErrors = logger.entries.filter((entry) => typeof entry.status === 'number' && entry.status >= 500);
      assert.deepEqual(serverErrors.map((entry) => `${String(entry.route)} ${String(entry.status)} ${safeStringify(entry.err).slice(0, 200)}`), []);
      const alive = await fetch(`${server.url}/healthz`);
      assert.equal(alive.status, 200);
    } finally {
      await server.stop();
    }
  });

  it('leaves Object.prototype unpolluted and the process without unhandled errors', () => {
    assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.deepEqual(crashes, []);
  });
});

/** The answer as text, at most READ_LIMIT_BYTES of it: a stream that does not end is cut off. */
async function readBounded(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const silence = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), 2_000);
    });
    const next = await Promise.race([reader.read(), silence]);
    clearTimeout(timer);
    if (next === undefined || next.done) break;
    chunks.push(next.value);
    total += next.value.byteLength;
    if (total >= READ_LIMIT_BYTES) break;
  }
  await reader.cancel().catch(() => undefined);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Writes `parts` to a fresh connection of `server`, each once the server has read the ones before,
 * and answers the status of every response read back. An `answered` exchange ends when a complete
 * final (non-1xx) response has arrived or the server closes; a `cut off` one (a client that gives up
 * halfway) is closed by the client once the server has read every byte of it.
 */
async function rawExchange(server: http.Server, port: number, parts: Array<string | Buffer>, expected: 'answered' | 'cut off', label: string): Promise<number[]> {
  const socket = net.connect(port, '127.0.0.1');
  // The server's end of this connection, for how much of the request it has read.
  const connections: net.Socket[] = [];
  const onConnection = (candidate: net.Socket): void => void connections.push(candidate);
  server.on('connection', onConnection);
  const readByServer = (): number => connections.find((candidate) => candidate.remotePort === socket.localPort)?.bytesRead ?? 0;
  const chunks: Buffer[] = [];
  let closed = false;
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.once('close', () => (closed = true));
  socket.once('error', () => undefined);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('error', reject);
    });
    let sent = 0;
    for (const part of parts) {
      if (sent > 0) await waitUntil(() => closed || readByServer() >= sent, `the server to read the request so far (${label})`);
      socket.write(part);
      sent += Buffer.byteLength(part);
    }
    if (expected === 'cut off') {
      await waitUntil(() => closed || readByServer() >= sent, `the server to read the cut-off request (${label})`);
    } else {
      await waitUntil(() => closed || hasFinalResponse(Buffer.concat(chunks)), `an answer, or the server closing the connection (${label})`);
    }
  } finally {
    server.off('connection', onConnection);
    socket.destroy();
  }
  return [...Buffer.concat(chunks).toString('latin1').matchAll(/^HTTP\/1\.[01] (\d{3})/gm)].map((found) => Number(found[1]));
}

/** Whether `bytes` hold a complete final response (after any 1xx): its head and a body framed by length or chunks. */
function hasFinalResponse(bytes: Buffer): boolean {
  let text = bytes.toString('latin1');
  for (;;) {
    const headEnd = text.indexOf('\r\n\r\n');
    if (headEnd < 0) return false;
    const head = text.slice(0, headEnd);
    const body = text.slice(headEnd + 4);
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]);
    if (status >= 100 && status < 200) {
      text = body;
      continue;
    }
    if (status === 204 || status === 304) return true;
    const length = /^content-length:\s*(\d+)\s*$/im.exec(head);
    if (length) return Buffer.byteLength(body, 'latin1') >= Number(length[1]);
    if (/^transfer-encoding:.*chunked/im.test(head)) return body.startsWith('0\r\n\r\n') || body.includes('\r\n0\r\n\r\n');
    // Framed by the connection closing: the caller waits for that.
    return false;
  }
}
