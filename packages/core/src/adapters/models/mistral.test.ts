import assert from 'node:assert/strict';
import { CITY_SCHEMA, describeModelGatewayContract, PDF_BYTES, useFakeVendor, loopbackHttp } from '../model-gateway.contract';
import { AiSdkModelGateway } from './ai-sdk-gateway';
import { ModelVendors } from './model-vendors';

const createGateway = () => new AiSdkModelGateway(new ModelVendors(), { http: loopbackHttp, maxRetries: 0 });

describeModelGatewayContract('mistral', createGateway);

describe('mistral adapter: wire format', () => {
  const fake = useFakeVendor('mistral');

  it('posts chat completions to base_url + /v1 with a bearer key and mapped params', async () => {
    await createGateway().generate({
      provider: 'mistral',
      model: 'mistral-small-latest',
      credentials: fake().credentials,
      messages: [{ role: 'user', content: 'Hi' }],
      params: { temperature: 0.7, max_tokens: 90, seed: 3 },
    });
    const [request] = fake().requests;
    assert.equal(request!.path, '/v1/chat/completions');
    assert.equal(request!.headers.authorization, `Bearer ${fake().credentials.api_key}`);
    assert.equal(request!.body.stream, undefined, 'generate asks for a whole answer');
    assert.equal(request!.body.max_tokens, 90);
    assert.equal(request!.body.temperature, 0.7);
    assert.equal(request!.body.random_seed, 3);
  });

  it('asks for a json_schema response format and sends PDFs as document_url', async () => {
    fake().reply({ type: 'json', value: { city: 'Nice', population: 342669 } });
    const response = await createGateway().generate({
      provider: 'mistral',
      model: 'mistral-small-latest',
      credentials: fake().credentials,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Which city?' }, { type: 'file', mediaType: 'application/pdf', data: PDF_BYTES }] }],
      responseSchema: { schema: CITY_SCHEMA, name: 'city' },
    });
    assert.deepEqual(response.object, { city: 'Nice', population: 342669 });
    const body = fake().requests[0]!.body;
    assert.equal(body.response_format.type, 'json_schema');
    assert.deepEqual(body.response_format.json_schema.schema, CITY_SCHEMA);
    assert.deepEqual(body.messages[0].content[1], { type: 'document_url', document_url: `data:application/pdf;base64,${PDF_BYTES.toString('base64')}` });
  });
});
