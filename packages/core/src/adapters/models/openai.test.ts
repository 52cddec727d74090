import assert from 'node:assert/strict';
import { CITY_SCHEMA, describeModelGatewayContract, useFakeVendor, WEATHER_TOOL, loopbackHttp } from '../model-gateway.contract';
import { AiSdkModelGateway } from './ai-sdk-gateway';
import { ModelVendors } from './model-vendors';

const createGateway = () => new AiSdkModelGateway(new ModelVendors(), { http: loopbackHttp, maxRetries: 0 });

describeModelGatewayContract('openai', createGateway);

describe('openai adapter: wire format', () => {
  const fake = useFakeVendor('openai');

  it('posts chat completions to base_url + /v1 with a bearer key and mapped params', async () => {
    await createGateway().generate({
      provider: 'openai',
      model: 'gpt-4o-mini',
      credentials: fake().credentials,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hi' }],
      params: { temperature: 0.2, max_tokens: 64, top_p: 0.5, stop: 'END', seed: 7 },
    });
    const [request] = fake().requests;
    assert.equal(request!.path, '/v1/chat/completions');
    assert.equal(request!.headers.authorization, `Bearer ${fake().credentials.api_key}`);
    assert.equal(request!.body.stream, undefined, 'generate asks for a whole answer');
    assert.deepEqual(request!.body.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]);
    assert.equal(request!.body.temperature, 0.2);
    assert.equal(request!.body.max_tokens, 64);
    assert.equal(request!.body.top_p, 0.5);
    assert.deepEqual(request!.body.stop, ['END']);
    assert.equal(request!.body.seed, 7);
  });

  it('declares tools as functions and asks for a strict json_schema response format', async () => {
    fake().reply({ type: 'json', value: { city: 'Oslo', population: 709037 } });
    await createGateway().generate({
      provider: 'openai',
      model: 'gpt-4o-mini',
      credentials: fake().credentials,
      messages: [{ role: 'user', content: 'A city?' }],
      tools: [WEATHER_TOOL],
      responseSchema: { schema: CITY_SCHEMA, name: 'city' },
    });
    const body = fake().requests[0]!.body;
    assert.deepEqual(body.tools, [
      { type: 'function', function: { name: 'get_weather', description: WEATHER_TOOL.description, parameters: WEATHER_TOOL.inputSchema } },
    ]);
    assert.deepEqual(body.response_format, { type: 'json_schema', json_schema: { schema: CITY_SCHEMA, strict: true, name: 'city' } });
  });

  it('sends images as image_url data URLs and PDFs as file parts', async () => {
    await createGateway().generate({
      provider: 'openai',
      model: 'gpt-4o-mini',
      credentials: fake().credentials,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'file', mediaType: 'image/png', data: new Uint8Array([1, 2, 3]) },
            { type: 'file', mediaType: 'application/pdf', data: new Uint8Array([4, 5]), filename: 'a.pdf' },
          ],
        },
      ],
    });
    const [image, pdf] = fake().requests[0]!.body.messages[0].content;
    assert.equal(image.type, 'image_url');
    assert.equal(image.image_url.url, 'data:image/png;base64,AQID');
    assert.equal(pdf.type, 'file');
    assert.equal(pdf.file.filename, 'a.pdf');
    assert.equal(pdf.file.file_data, 'data:application/pdf;base64,BAU=');
  });
});
