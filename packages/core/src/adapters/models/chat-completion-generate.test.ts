import assert from 'node:assert/strict';
import type { ModelRequest } from '../../ports/model-gateway';
import { type LoopbackSink, startLoopbackSink } from '../http-client.contract';
import { GuardedHttpClient } from '../node/guarded-http-client';
import { AiSdkModelGateway } from './ai-sdk-gateway';
import { chatCompletionBody } from './chat-completion-generate';
import { ModelVendors, defaultModelVendors } from './model-vendors';
import { callOptions } from './vendor-stream';

/**
 * The lean generate path of chat completions against the AI SDK's chat models, which it stands in
 * for: each call sent both ways to one loopback server must arrive the same (path, headers, body
 * bytes) and end the same (the answer, or the `ModelCallError`).
 */
describe('openai chat completions: the lean generate path', () => {
  const provider = 'openai';
  const http = new GuardedHttpClient({ egress: { allowPrivateNetwork: true } });
  const lean = new AiSdkModelGateway(new ModelVendors(), { http, maxRetries: 0 });
  const sdkOnly = new AiSdkModelGateway(new ModelVendors(defaultModelVendors.map((vendor) => ({ ...vendor, generate: undefined }))), { http, maxRetries: 0 });
  let sink: LoopbackSink;
  beforeEach(async () => {
    sink = await startLoopbackSink();
  });
  afterEach(() => sink.close());

  const request = (fields: Partial<ModelRequest> = {}): ModelRequest => ({
    provider,
    model: 'gpt-4o-mini',
    credentials: { api_key: 'sk-lean-0123456789', base_url: `http://127.0.0.1:${sink.port}` },
    system: 'Be brief.',
    messages: [{ role: 'user', content: 'Hi' }],
    ...fields,
  });

  /** Sends `call` the SDK's way, then the lean way: what each sent and how each ended. */
  async function bothWays(call: ModelRequest): Promise<void> {
    const outcome = (gateway: AiSdkModelGateway) =>
      gateway.generate(call).then(
        (response) => ({ response }),
        (error: Error) => ({ error: { ...error, name: error.name, message: error.message } }),
      );
    const bySdk = await outcome(sdkOnly);
    const byLean = await outcome(lean);
    const [sentBySdk, sentByLean] = sink.requests.map(({ method, url, headers, body }) => ({ method, url, headers: { ...headers, connection: undefined }, body }));
    assert.deepEqual(sentByLean, sentBySdk, 'the same request');
    assert.deepEqual(byLean, bySdk, 'the same outcome');
  }

  const COMPLETION = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1700000000,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 },
  };
  const answering = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
    sink.respond = (_request, response) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
  };

  const CALLS: [string, Partial<ModelRequest>][] = [
    ['a system text and a user text', {}],
    ['every sampling parameter', { params: { temperature: 0.2, max_tokens: 64, top_p: 0.5, stop: 'END', seed: 7, presence_penalty: 0.1, frequency_penalty: -0.3 } }],
    ['stop sequences and maxOutputTokens', { params: { stop: ['a', 'b'], maxOutputTokens: 9 } }],
    ['a conversation, text parts and no system text', {
      system: undefined,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'One' }, { type: 'text', text: 'two' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Three, ' }, { type: 'text', text: 'four' }] },
        { role: 'user', content: '' },
      ],
    }],
    ['a model of its own name', { model: 'my-local-model' }],
    ['a name the URL escapes', { model: 'my model/ü' }],
    ['GPT-5 chat', { model: 'gpt-5-chat-latest', params: { temperature: 0.5 } }],
    ['text that needs escaping', { messages: [{ role: 'user', content: 'quote " backslash \\ newline \n emoji 🎉 \u2028' }] }],
  ];
  for (const [name, fields] of CALLS) {
    it(`sends ${name} as the SDK does`, async () => {
      answering(200, COMPLETION);
      await bothWays(request(fields));
    });
  }

  const ANSWERS: [string, number, unknown, Record<string, string>?][] = [
    ['a refusal', 200, { ...COMPLETION, choices: [{ index: 0, message: { content: null, refusal: 'I cannot.' }, finish_reason: 'stop' }] }],
    ['a tool call', 200, {
      ...COMPLETION,
      choices: [{ index: 0, message: { content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }, finish_reason: 'tool_calls' }],
    }],
    ['an audio transcript, no usage', 200, { choices: [{ index: 0, message: { content: '', audio: { transcript: 'Spoken' } }, finish_reason: 'length' }], usage: null }],
    ['finish reasons of other spellings', 200, { choices: [{ index: 0, message: { content: 'x' }, finish_reason: 'content_filter' }, { index: 1, message: {}, finish_reason: 'whatever' }] }],
    ['no choices', 200, { ...COMPLETION, choices: [] }],
    ['no JSON', 200, 'not json'],
    ['JSON of another shape', 200, { choices: [{ message: { content: 5 } }] }],
    ['a rate limit with a wait', 429, { error: { message: 'Slow down', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after-ms': '1500' }],
    ['refused credentials', 401, { error: { message: 'Incorrect API key provided: sk-lean-0123456789', type: 'invalid_request_error', code: 'invalid_api_key' } }],
    ['a server error without a body', 503, ''],
    ['an error body of another shape', 400, { error: { message: 'Bad', code: { nested: true } } }],
    ['an error body that is no JSON', 500, '<html>oops</html>'],
  ];
  for (const [name, status, body, headers] of ANSWERS) {
    it(`ends as the SDK does on ${name}`, async () => {
      answering(status, body, headers);
      await bothWays(request());
    });
  }

  it('ends as the SDK does when the vendor cannot be reached', async () => {
    const port = sink.port;
    await sink.close();
    const call = request({ credentials: { api_key: 'sk-lean-0123456789', base_url: `http://127.0.0.1:${port}` } });
    const [bySdk, byLean] = await Promise.all([sdkOnly.generate(call).catch((error: Error) => error), lean.generate(call).catch((error: Error) => error)]);
    assert.deepEqual({ ...byLean, message: (byLean as Error).message }, { ...bySdk, message: (bySdk as Error).message });
    sink = await startLoopbackSink();
  });

  it('leaves to the SDK model what takes rules of its own: reasoning and search models, top_k, tools, files, structured output, tool turns', () => {
    const signal = new AbortController().signal;
    const covered = (fields: Partial<ModelRequest>): boolean => {
      const call = request(fields);
      return chatCompletionBody(call.model, callOptions(call, signal)) !== undefined;
    };
    assert.equal(covered({}), true);
    for (const model of ['o1', 'o3-mini', 'o4-mini-2025-04-16', 'gpt-5', 'gpt-5-mini', 'gpt-5.1', 'gpt-5.1-chat-latest', 'gpt-6', 'gpt-4o-search-preview', 'gpt-4o-mini-search-preview-2025-03-11']) {
      assert.equal(covered({ model }), false, model);
    }
    assert.equal(covered({ params: { top_k: 3 } }), false);
    assert.equal(covered({ tools: [{ name: 't', inputSchema: { type: 'object' } }] }), false);
    assert.equal(covered({ toolChoice: 'none' }), false);
    assert.equal(covered({ responseSchema: { schema: { type: 'object' } } }), false);
    assert.equal(covered({ messages: [{ role: 'user', content: [{ type: 'file', mediaType: 'image/png', data: new Uint8Array([1]) }] }] }), false);
    assert.equal(
      covered({
        messages: [
          { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: {} }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', output: 'x' }] },
        ],
      }),
      false,
    );
  });
});
