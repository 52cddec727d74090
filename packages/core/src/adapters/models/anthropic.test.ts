import assert from 'node:assert/strict';
import { CITY_SCHEMA, describeModelGatewayContract, PNG_BYTES, useFakeVendor, loopbackHttp } from '../model-gateway.contract';
import { AiSdkModelGateway } from './ai-sdk-gateway';
import { ModelVendors } from './model-vendors';

const createGateway = () => new AiSdkModelGateway(new ModelVendors(), { http: loopbackHttp, maxRetries: 0 });

describeModelGatewayContract('anthropic', createGateway);

describe('anthropic adapter: wire format', () => {
  const fake = useFakeVendor('anthropic');

  it('posts to base_url + /v1/messages with x-api-key, anthropic-version, system and max_tokens', async () => {
    await createGateway().generate({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      credentials: fake().credentials,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hi' }],
      params: { max_tokens: 300, temperature: 0.1, stop: ['END'] },
    });
    const [request] = fake().requests;
    assert.equal(request!.path, '/v1/messages');
    assert.equal(request!.headers['x-api-key'], fake().credentials.api_key);
    assert.equal(request!.headers.authorization, undefined);
    assert.equal(request!.headers['anthropic-version'], '2023-06-01');
    assert.deepEqual(request!.body.system, [{ type: 'text', text: 'Be brief.' }]);
    assert.equal(request!.body.max_tokens, 300);
    assert.equal(request!.body.temperature, 0.1);
    assert.deepEqual(request!.body.stop_sequences, ['END']);
  });

  it('asks known models for native structured output through output_config', async () => {
    fake().reply({ type: 'json', value: { city: 'Rome', population: 2748109 } });
    const response = await createGateway().generate({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      credentials: fake().credentials,
      messages: [{ role: 'user', content: 'A city?' }],
      responseSchema: { schema: CITY_SCHEMA },
    });
    assert.deepEqual(response.object, { city: 'Rome', population: 2748109 });
    assert.equal(fake().requests[0]!.body.output_config.format.type, 'json_schema');
  });

  it('gets structured output from older models through a forced json tool', async () => {
    fake().reply({ type: 'json', value: { city: 'Kyoto', population: 1463723 } });
    const response = await createGateway().generate({
      provider: 'anthropic',
      model: 'claude-3-haiku-20240307',
      credentials: fake().credentials,
      messages: [{ role: 'user', content: 'A city?' }],
      responseSchema: { schema: CITY_SCHEMA },
    });
    assert.deepEqual(response.object, { city: 'Kyoto', population: 1463723 });
    const body = fake().requests[0]!.body;
    assert.deepEqual(body.tool_choice, { type: 'any', disable_parallel_tool_use: true });
    assert.deepEqual(
      body.tools.map((tool: { name: string }) => tool.name),
      ['json'],
    );
    assert.equal(body.output_config, undefined);
  });

  it('sends images as base64 image blocks', async () => {
    await createGateway().generate({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      credentials: fake().credentials,
      messages: [{ role: 'user', content: [{ type: 'file', mediaType: 'image/png', data: PNG_BYTES }] }],
    });
    const [image] = fake().requests[0]!.body.messages[0].content;
    assert.deepEqual(image, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BYTES.toString('base64') } });
  });
});
