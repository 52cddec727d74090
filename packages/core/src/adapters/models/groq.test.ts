import assert from 'node:assert/strict';
import { CITY_SCHEMA, collectResponse, describeModelGatewayContract, useFakeVendor, loopbackHttp } from '../model-gateway.contract';
import { AiSdkModelGateway } from './ai-sdk-gateway';
import { ModelVendors } from './model-vendors';

const createGateway = () => new AiSdkModelGateway(new ModelVendors(), { http: loopbackHttp, maxRetries: 0 });

describeModelGatewayContract('groq', createGateway);

describe('groq adapter: wire format', () => {
  const fake = useFakeVendor('groq');

  it('streams from base_url + /openai/v1/chat/completions with a bearer key and reads usage from x_groq', async () => {
    fake().reply({ type: 'text', chunks: ['fast'], usage: { input: 31, output: 1 } });
    const response = await collectResponse(
      createGateway().stream({
        provider: 'groq',
        model: 'llama-3.3-70b-versatile',
        credentials: fake().credentials,
        messages: [{ role: 'user', content: 'Hi' }],
        params: { max_tokens: 10 },
      }),
    );
    assert.deepEqual(response.usage, { input_tokens: 31, output_tokens: 1 });
    const [request] = fake().requests;
    assert.equal(request!.path, '/openai/v1/chat/completions');
    assert.equal(request!.headers.authorization, `Bearer ${fake().credentials.api_key}`);
    assert.equal(request!.body.max_tokens, 10);
  });

  it('asks for a json_schema response format', async () => {
    fake().reply({ type: 'json', value: { city: 'Porto', population: 231800 } });
    const response = await createGateway().generate({
      provider: 'groq',
      model: 'llama-3.3-70b-versatile',
      credentials: fake().credentials,
      messages: [{ role: 'user', content: 'A city?' }],
      responseSchema: { schema: CITY_SCHEMA, name: 'city' },
    });
    assert.deepEqual(response.object, { city: 'Porto', population: 231800 });
    assert.deepEqual(fake().requests[0]!.body.response_format, { type: 'json_schema', json_schema: { schema: CITY_SCHEMA, strict: true, name: 'city' } });
  });
});
