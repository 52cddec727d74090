import { strict as assert } from 'node:assert';
import { startFakeVendor, type FakeVendorServer } from '../testing/fake-vendors';
import type { ProviderName } from '../ports/provider-names';
import { GuardedHttpClient } from './node/guarded-http-client';
import {
  ModelCallError,
  type ModelGateway,
  type ModelRequest,
  type ModelResponse,
  type ModelStreamEvent,
} from '../ports/model-gateway';

/** A 1×1 transparent PNG and a minimal PDF, sent as content parts. */
export const PNG_BYTES = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);
export const PDF_BYTES = Buffer.from('%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n', 'latin1');

export const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather of a city',
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city'],
    additionalProperties: false,
  },
} as const;

export const CITY_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, population: { type: 'integer' } },
  required: ['city', 'population'],
  additionalProperties: false,
} as const;

export async function collect(events: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const all: ModelStreamEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

/** A stream collected into one response, rejecting with the error that ends it. */
export async function collectResponse(events: AsyncIterable<ModelStreamEvent>): Promise<ModelResponse> {
  let text = '';
  const toolCalls: ModelResponse['toolCalls'] = [];
  for await (const event of events) {
    switch (event.type) {
      case 'text-delta':
        text += event.text;
        break;
      case 'tool-call':
        toolCalls.push({ toolCallId: event.toolCallId, toolName: event.toolName, input: event.input });
        break;
      case 'error':
        throw event.error;
      case 'finish':
        return { text, toolCalls, ...('object' in event ? { object: event.object } : {}), finishReason: event.finishReason, usage: event.usage };
    }
  }
  throw new Error('model stream ended without a finish or error event');
}

/** The `ModelCallError` a call rejects with. */
export async function callError(call: Promise<unknown>): Promise<ModelCallError> {
  const error = await call.then(
    (value) => assert.fail(`expected a ModelCallError, got ${JSON.stringify(value)}`),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof ModelCallError, `expected a ModelCallError, got ${String(error)}`);
  return error;
}

/** The one terminal event of a stream, checked to be an error, and the error. */
export function lastError(events: ModelStreamEvent[]): ModelCallError {
  const last = events.at(-1);
  assert.equal(last?.type, 'error', `expected the stream to end with an error, got ${JSON.stringify(last)}`);
  assert.ok(last.error instanceof ModelCallError);
  return last.error;
}

/** Credential values that are secrets (everything but addresses and names). */
export function secretValues(credentials: Record<string, string>): string[] {
  return Object.entries(credentials)
    .filter(([field]) => !['base_url', 'region', 'resource_name', 'api_version'].includes(field))
    .map(([, value]) => value);
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The HttpClient the gateways under test send through: the real guarded client, opened to
 * private networks because the fake vendors listen on loopback.
 */
export const loopbackHttp = new GuardedHttpClient({ egress: { allowPrivateNetwork: true } });

/** Starts the fake of `provider` for the enclosing `describe`, fresh for each test. */
export function useFakeVendor(provider: ProviderName): () => FakeVendorServer {
  let fake: FakeVendorServer | undefined;
  before(async () => {
    fake = await startFakeVendor(provider);
  });
  after(() => fake?.close());
  beforeEach(() => fake?.reset());
  return () => fake!;
}

/** How a contract case calls the gateway: `generate`, or `stream` collected into a response. */
const CALL_MODES = {
  generate: (gateway: ModelGateway, request: ModelRequest) => gateway.generate(request),
  stream: (gateway: ModelGateway, request: ModelRequest) => collectResponse(gateway.stream(request)),
} as const;

/**
 * The contract every `ModelGateway` adapter passes for one provider, against a local fake of that
 * vendor speaking its real wire format. The cases on answers, errors, aborts and addresses run for
 * both `generate` (which must use the vendor's non-streaming endpoint) and `stream`; then come the
 * cases only a stream has. `createGateway` must not retry failed calls, so error mapping is seen
 * directly.
 */
export function describeModelGatewayContract(provider: ProviderName, createGateway: () => ModelGateway): void {
  describe(`ModelGateway contract: ${provider}`, () => {
    const vendor = useFakeVendor(provider);
    let fake: FakeVendorServer;
    let gateway: ModelGateway;
    const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
      provider,
      model: fake.model,
      credentials: fake.credentials,
      system: 'You are terse.',
      messages: [{ role: 'user', content: 'Say hello' }],
      ...overrides,
    });

    before(() => {
      fake = vendor();
      gateway = createGateway();
    });

    for (const [mode, callWith] of Object.entries(CALL_MODES)) {
      describe(`${mode}()`, () => {
        const call = (overrides: Partial<ModelRequest> = {}) => callWith(gateway, request(overrides));

        it(`answers text with finish reason and usage, through the vendor's ${mode === 'stream' ? 'streaming' : 'non-streaming'} endpoint`, async () => {
          fake.reply({ type: 'text', chunks: ['Bon', 'jour', ' le', ' monde'], usage: { input: 21, output: 4 } });
          const response = await call();
          assert.deepEqual(response, { text: 'Bonjour le monde', toolCalls: [], finishReason: 'stop', usage: { input_tokens: 21, output_tokens: 4 } });
          assert.equal(fake.requests.length, 1, 'one request reached the fake named by base_url');
          assert.equal(fake.protocol.streams(fake.requests[0]!), mode === 'stream');
          const body = fake.requests[0]!.rawBody.toString('utf8');
          assert.ok(body.includes('You are terse.') && body.includes('Say hello'), 'system and user text are sent');
        });

        it('parses a tool call with its input', async () => {
          fake.reply({ type: 'tool-call', toolName: 'get_weather', input: { city: 'Lyon', unit: 'celsius' } });
          const response = await call({ tools: [WEATHER_TOOL] });
          assert.equal(response.finishReason, 'tool-calls');
          assert.equal(response.toolCalls.length, 1);
          const [toolCall] = response.toolCalls;
          assert.equal(toolCall!.toolName, 'get_weather');
          assert.deepEqual(toolCall!.input, { city: 'Lyon', unit: 'celsius' });
          assert.ok(toolCall!.toolCallId.length > 0);
          assert.ok(fake.requests[0]!.rawBody.toString('utf8').includes('Current weather of a city'), 'tool description is sent');
        });

        it('sends a tool result back in a follow-up turn', async () => {
          fake.reply({ type: 'text', chunks: ['It is 18°C in Lyon.'] });
          const response = await call({
            tools: [WEATHER_TOOL],
            messages: [
              { role: 'user', content: 'Weather in Lyon?' },
              { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call1abcd', toolName: 'get_weather', input: { city: 'Lyon' } }] },
              { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call1abcd', toolName: 'get_weather', output: { temperature_c: 18.5 } }] },
            ],
          });
          assert.equal(response.text, 'It is 18°C in Lyon.');
          assert.ok(fake.requests[0]!.rawBody.toString('utf8').includes('18.5'), 'the tool output is in the request');
        });

        it('returns structured output matching the response schema', async () => {
          fake.reply({ type: 'json', value: { city: 'Paris', population: 2102650 } });
          const response = await call({ responseSchema: { schema: CITY_SCHEMA, name: 'city' } });
          assert.deepEqual(response.object, { city: 'Paris', population: 2102650 });
          assert.ok(fake.requests[0]!.rawBody.toString('utf8').includes('population'), 'the schema is sent to the vendor');
        });

        it('fails structured output that does not match the schema', async () => {
          fake.reply({ type: 'json', value: { city: 'Paris', population: 'many' } });
          const error = await callError(call({ responseSchema: { schema: CITY_SCHEMA } }));
          assert.equal(error.code, 'vendor_error');
          assert.match(error.message, new RegExp(provider));
          assert.match(error.message, /population/);
        });

        it('maps a wrong key to auth_failed naming the provider, without any credential in the message', async () => {
          const wrong = fake.wrongCredentials;
          const error = await callError(call({ credentials: wrong }));
          assert.equal(error.code, 'auth_failed');
          assert.equal(error.provider, provider);
          assert.ok(error.status === 400 || error.status === 401 || error.status === 403, `status ${error.status}`);
          assert.ok(error.message.includes(provider), error.message);
          for (const secret of [...secretValues(wrong), ...secretValues(fake.credentials)]) {
            assert.ok(!error.message.includes(secret), 'no credential in the message');
            assert.ok(!error.message.includes(secret.slice(-12)), 'no tail of a credential in the message');
          }
        });

        it('maps 429 to rate_limited and 5xx to vendor_error, with the status', async () => {
          fake.reply({ type: 'error', status: 429, message: 'slow down please' }, { type: 'error', status: 500, message: 'boom inside' });
          const limited = await callError(call());
          assert.equal(limited.code, 'rate_limited');
          assert.equal(limited.status, 429);
          assert.ok(limited.message.includes(provider));
          const failed = await callError(call());
          assert.equal(failed.code, 'vendor_error');
          assert.equal(failed.status, 500);
          assert.ok(failed.message.includes(provider) && failed.message.includes('boom inside'), failed.message);
        });

        it('stops the request when the signal aborts, and the vendor sees the connection close', async () => {
          fake.reply({ type: 'hang' });
          const controller = new AbortController();
          const done = callError(call({ signal: controller.signal }));
          const seen = await within(fake.waitForRequests(1), 5000, 'the request');
          controller.abort();
          const error = await within(done, 5000, 'the end of the call');
          assert.equal(error.code, 'aborted');
          assert.ok(error.message.includes(provider));
          await within(seen.closed, 5000, 'the connection close');
          assert.equal(seen.completed, false);
        });

        it('reports a signal timeout as timeout', async () => {
          fake.reply({ type: 'hang' });
          const error = await within(callError(call({ signal: AbortSignal.timeout(150) })), 5000, 'the timeout');
          assert.equal(error.code, 'timeout');
          assert.ok(error.message.includes(provider));
        });

        it('does not call the vendor when the signal is already aborted', async () => {
          const controller = new AbortController();
          controller.abort();
          assert.equal((await callError(call({ signal: controller.signal }))).code, 'aborted');
          assert.equal(fake.requests.length, 0);
        });

        it('honours base_url given with the API path, and fails naming the provider when it is unreachable', async () => {
          const withPath = { ...fake.credentials, base_url: `${fake.baseUrl}${fake.protocol.basePath}` };
          assert.equal((await call({ credentials: withPath })).text, `Hello from ${provider}`);
          assert.equal(fake.requests.length, 1);

          const error = await callError(call({ credentials: { ...fake.credentials, base_url: 'http://127.0.0.1:9' } }));
          assert.equal(error.code, 'vendor_error');
          assert.ok(error.message.includes(provider) && error.message.includes('127.0.0.1:9'), error.message);
          assert.equal(fake.requests.length, 1, 'nothing went to the fake');
        });

        it('fails with provider_not_configured when a required credential is missing', async () => {
          const error = await callError(call({ credentials: { base_url: fake.baseUrl } }));
          assert.equal(error.code, 'provider_not_configured');
          assert.ok(error.message.includes(provider));
          assert.equal(fake.requests.length, 0);
        });

        it('sends an image content part in the vendor format', async () => {
          await call({
            messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'file', mediaType: 'image/png', data: PNG_BYTES }] }],
          });
          assert.deepEqual(fake.protocol.receivedFiles(fake.requests[0]!), [{ mediaType: 'image/png', base64: PNG_BYTES.toString('base64') }]);
        });

        it('sends a PDF file part in the vendor format, or refuses it as bad_request where the vendor takes none', async () => {
          const answer = call({
            messages: [
              { role: 'user', content: [{ type: 'text', text: 'Summarise' }, { type: 'file', mediaType: 'application/pdf', data: PDF_BYTES, filename: 'report.pdf' }] },
            ],
          });
          if (fake.protocol.acceptsPdf) {
            assert.equal((await answer).finishReason, 'stop');
            assert.deepEqual(fake.protocol.receivedFiles(fake.requests[0]!), [{ mediaType: 'application/pdf', base64: PDF_BYTES.toString('base64') }]);
          } else {
            const error = await callError(answer);
            assert.equal(error.code, 'bad_request');
            assert.ok(error.message.includes(provider));
            assert.equal(fake.requests.length, 0);
          }
        });
      });
    }

    describe('stream() only', () => {
      it('yields text deltas in order (those that arrived together may come joined), then one finish event with usage', async () => {
        fake.reply({ type: 'text', chunks: ['Bon', 'jour', ' le', ' monde'], usage: { input: 21, output: 4 } });
        const events = await collect(gateway.stream(request()));
        const deltas = events.filter((event) => event.type === 'text-delta').map((event) => event.text);
        assert.equal(deltas.join(''), 'Bonjour le monde');
        assert.ok(deltas.every((delta) => delta !== ''), 'no empty delta');
        assert.deepEqual(events.at(-1), { type: 'finish', finishReason: 'stop', usage: { input_tokens: 21, output_tokens: 4 } });
      });

      it('ends a failed call with the error as its only event', async () => {
        const events = await collect(gateway.stream(request({ credentials: fake.wrongCredentials })));
        assert.equal(lastError(events).code, 'auth_failed');
        assert.equal(events.length, 1, 'the error is the only event');
      });

      it('aborts mid-stream after text arrived, and the vendor sees the connection close', async () => {
        fake.reply({ type: 'hang', partial: ['one ', 'two ', 'three ', 'four ', 'five ', 'six ', 'seven ', 'eight '] });
        const controller = new AbortController();
        const events: ModelStreamEvent[] = [];
        for await (const event of gateway.stream(request({ signal: controller.signal }))) {
          events.push(event);
          if (event.type === 'text-delta') controller.abort();
        }
        assert.equal(events[0]!.type, 'text-delta');
        assert.equal(lastError(events).code, 'aborted');
        await within(fake.requests[0]!.closed, 5000, 'the connection close');
      });

      it('cancels the vendor request when the caller stops iterating', async () => {
        fake.reply({ type: 'hang', partial: ['one ', 'two ', 'three ', 'four ', 'five ', 'six ', 'seven ', 'eight '] });
        for await (const event of gateway.stream(request())) {
          if (event.type === 'text-delta') break;
        }
        await within(fake.requests[0]!.closed, 5000, 'the connection close');
        assert.equal(fake.requests[0]!.completed, false);
      });
    });
  });
}
