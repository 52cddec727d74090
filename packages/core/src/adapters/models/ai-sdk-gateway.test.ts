import assert from 'node:assert/strict';
import { Container } from 'inversify';
import { PROVIDER_NAMES } from '../../ports/provider-names';
import { HttpClient } from '../../ports/http-client';
import { Logger } from '../../ports/logger';
import { ModelCallError, ModelGateway, type ModelRequest } from '../../ports/model-gateway';
import { callError, collect, lastError, useFakeVendor, WEATHER_TOOL, loopbackHttp } from '../model-gateway.contract';
import { AiSdkModelGateway } from './ai-sdk-gateway';
import { ModelVendors } from './model-vendors';
import { modelsModule } from './models-module';

class RecordingLogger implements Logger {
  readonly warnings: { fields: Record<string, unknown>; message: string }[] = [];
  info(): void {}
  warn(fields: Record<string, unknown>, message: string): void {
    this.warnings.push({ fields, message });
  }
  error(): void {}
}

describe('AiSdkModelGateway', () => {
  const openai = useFakeVendor('openai');
  const anthropic = useFakeVendor('anthropic');
  const gateway = new AiSdkModelGateway(new ModelVendors(), { http: loopbackHttp, maxRetries: 0 });
  const openaiRequest = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
    provider: 'openai',
    model: 'gpt-4o-mini',
    credentials: openai().credentials,
    messages: [{ role: 'user', content: 'Hi' }],
    ...overrides,
  });

  it('has one vendor adapter for each of the seven providers, in the documented provider order', () => {
    assert.deepEqual(new ModelVendors().providers, [...PROVIDER_NAMES]);
    assert.deepEqual(PROVIDER_NAMES, ['openai', 'anthropic', 'google', 'azure-openai', 'mistral', 'aws-bedrock', 'groq']);
  });

  it('refuses an unknown provider as bad_request naming it', async () => {
    const error = lastError(await collect(gateway.stream(openaiRequest({ provider: 'acme-ai' as never }))));
    assert.equal(error.code, 'bad_request');
    assert.equal(error.provider, 'acme-ai');
    assert.match(error.message, /unknown model provider 'acme-ai'/);
  });

  it('binds ModelGateway in modelsModule, sending through the bound HttpClient and reporting call warnings through the Logger port', async () => {
    const logger = new RecordingLogger();
    const container = new Container();
    container.bind(Logger).toConstantValue(logger);
    container.bind(HttpClient).toConstantValue(loopbackHttp);
    await container.loadAsync(modelsModule);
    const bound = container.get<ModelGateway>(ModelGateway);
    assert.ok(bound instanceof AiSdkModelGateway);
    // claude-sonnet-4-5 takes temperature or top_p, not both: the SDK drops top_p with a warning.
    const response = await bound.generate({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      credentials: anthropic().credentials,
      messages: [{ role: 'user', content: 'Hi' }],
      params: { temperature: 0.5, top_p: 0.9 },
    });
    assert.equal(response.text, 'Hello from anthropic');
    assert.equal(logger.warnings.length, 1);
    assert.equal(logger.warnings[0]!.fields.provider, 'anthropic');
    assert.match(JSON.stringify(logger.warnings[0]!.fields.warning), /topP/);
  });

  it('reports the call warnings of a stream read by its wire decoder', async () => {
    const logger = new RecordingLogger();
    const logging = new AiSdkModelGateway(new ModelVendors(), { http: loopbackHttp, maxRetries: 0, logger });
    // OpenAI's chat completions take no top_k: the SDK leaves it out with a warning.
    const events = await collect(logging.stream(openaiRequest({ params: { top_k: 5 } })));
    assert.equal(events.at(-1)?.type, 'finish');
    assert.ok(!('top_k' in openai().requests[0]!.body));
    // The SDK handles its copy of the answer a turn after the decoder starts on the body.
    for (let turn = 0; logger.warnings.length === 0 && turn < 100; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(logger.warnings.length, 1);
    assert.equal(logger.warnings[0]!.fields.provider, 'openai');
    assert.match(JSON.stringify(logger.warnings[0]!.fields.warning), /topK/);
  });

  it('never takes credentials from the host environment', async () => {
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = openai().credentials.api_key;
    try {
      const error = lastError(await collect(gateway.stream(openaiRequest({ credentials: { base_url: openai().baseUrl } }))));
      assert.equal(error.code, 'provider_not_configured');
      assert.match(error.message, /openai.*api_key/);
      assert.equal(openai().requests.length, 0);
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  });

  it('removes a credential that the vendor echoes in an error message, streamed or not', async () => {
    const { api_key } = openai().credentials;
    const echo = { type: 'error', status: 400, message: `unsupported value for key ${api_key} in this project` } as const;
    openai().reply(echo, echo);
    const errors = [lastError(await collect(gateway.stream(openaiRequest()))), await callError(gateway.generate(openaiRequest()))];
    for (const error of errors) {
      assert.equal(error.code, 'bad_request');
      assert.equal(error.status, 400);
      assert.ok(!error.message.includes(api_key!));
      assert.match(error.message, /^openai rejected the request \(HTTP 400\): unsupported value for key \[redacted\] in this project$/);
    }
  });

  it('keeps base_url user info out of messages and refuses a base_url that is not http(s)', async () => {
    const withUserInfo = { ...openai().credentials, base_url: 'http://proxyuser:proxy-password-1@127.0.0.1:9/v1' };
    const unreachable = lastError(await collect(gateway.stream(openaiRequest({ credentials: withUserInfo }))));
    assert.equal(unreachable.code, 'vendor_error');
    assert.ok(!unreachable.message.includes('proxy-password-1') && !unreachable.message.includes('proxyuser'), unreachable.message);

    const ftp = lastError(await collect(gateway.stream(openaiRequest({ credentials: { ...openai().credentials, base_url: 'ftp://example.com' } }))));
    assert.equal(ftp.code, 'provider_not_configured');
    assert.match(ftp.message, /base_url must be an http or https URL/);
  });

  it('maps max_tokens (winning over maxOutputTokens) and accepts maxOutputTokens alone', async () => {
    await gateway.generate(openaiRequest({ params: { max_tokens: 12, maxOutputTokens: 99 } }));
    await gateway.generate(openaiRequest({ params: { maxOutputTokens: 33 } }));
    assert.deepEqual(
      openai().requests.map((request) => request.body.max_tokens),
      [12, 33],
    );
  });

  it('retries rate-limited calls, then reports rate_limited once retries run out', async () => {
    const retrying = new AiSdkModelGateway(new ModelVendors(), { http: loopbackHttp, maxRetries: 2 });
    openai().reply({ type: 'error', status: 429, message: 'busy', retryAfterSeconds: 0 });
    assert.equal((await retrying.generate(openaiRequest())).text, 'Hello from openai');
    assert.equal(openai().requests.length, 2);

    openai().reset();
    const busy = { type: 'error', status: 429, message: 'still busy', retryAfterSeconds: 0 } as const;
    openai().reply(busy, busy, busy);
    const error = await retrying.generate(openaiRequest()).then(
      () => assert.fail('expected a ModelCallError'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof ModelCallError);
    assert.equal(error.code, 'rate_limited');
    assert.equal(error.status, 429);
    assert.match(error.message, /still busy/);
    assert.equal(openai().requests.length, 3);
  });

  it('refuses a response schema that does not compile as bad_request, without calling the vendor', async () => {
    const error = lastError(await collect(gateway.stream(openaiRequest({ responseSchema: { schema: { type: 'no-such-type' } } }))));
    assert.equal(error.code, 'bad_request');
    assert.match(error.message, /response schema for openai is not a valid JSON Schema/);
    assert.equal(openai().requests.length, 0);
  });

  it('forces a named tool with toolChoice and sends tool errors back as errors', async () => {
    openai().reply({ type: 'tool-call', toolName: 'get_weather', input: { city: 'Bern' } });
    await gateway.generate(
      openaiRequest({
        tools: [WEATHER_TOOL],
        toolChoice: { toolName: 'get_weather' },
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call1abcd', toolName: 'get_weather', input: { city: 'Zug' } }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call1abcd', toolName: 'get_weather', output: 'station offline', isError: true }] },
        ],
      }),
    );
    const body = openai().requests[0]!.body;
    assert.deepEqual(body.tool_choice, { type: 'function', function: { name: 'get_weather' } });
    assert.deepEqual(body.messages.at(-1), { role: 'tool', tool_call_id: 'call1abcd', content: 'station offline' });
  });

  it('ModelCallError helpers name the provider and what to do', () => {
    const disabled = ModelCallError.providerDisabled('mistral');
    assert.equal(disabled.code, 'provider_disabled');
    assert.match(disabled.message, /'mistral' is disabled.*PUT \/v1\/llm-provider\/mistral/);
    const missing = ModelCallError.providerNotConfigured('groq');
    assert.equal(missing.code, 'provider_not_configured');
    assert.match(missing.message, /'groq' is not configured/);
  });
});
