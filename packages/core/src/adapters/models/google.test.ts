import assert from 'node:assert/strict';
import { CITY_SCHEMA, collect, describeModelGatewayContract, lastError, PDF_BYTES, useFakeVendor, WEATHER_TOOL, loopbackHttp } from '../model-gateway.contract';
import { AiSdkModelGateway } from './ai-sdk-gateway';
import { ModelVendors } from './model-vendors';

const createGateway = () => new AiSdkModelGateway(new ModelVendors(), { http: loopbackHttp, maxRetries: 0 });

describeModelGatewayContract('google', createGateway);

describe('google adapter: wire format', () => {
  const fake = useFakeVendor('google');

  it('posts to base_url + /v1beta/models/{model}:generateContent with x-goog-api-key', async () => {
    await createGateway().generate({
      provider: 'google',
      model: 'gemini-2.5-flash',
      credentials: fake().credentials,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hi' }],
      params: { temperature: 0.4, max_tokens: 50, top_k: 20, stop: ['END'] },
    });
    const [request] = fake().requests;
    assert.equal(request!.url, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(request!.headers['x-goog-api-key'], fake().credentials.api_key);
    assert.equal(request!.query.get('key'), null, 'the key is not put in the URL');
    assert.deepEqual(request!.body.systemInstruction, { parts: [{ text: 'Be brief.' }] });
    assert.deepEqual(request!.body.contents, [{ role: 'user', parts: [{ text: 'Hi' }] }]);
    assert.deepEqual(request!.body.generationConfig, { maxOutputTokens: 50, temperature: 0.4, topK: 20, stopSequences: ['END'] });
  });

  it('declares functions and asks for application/json with a response schema', async () => {
    fake().reply({ type: 'json', value: { city: 'Lima', population: 9943800 } });
    await createGateway().generate({
      provider: 'google',
      model: 'gemini-2.5-flash',
      credentials: fake().credentials,
      messages: [{ role: 'user', content: 'A city?' }],
      tools: [WEATHER_TOOL],
      responseSchema: { schema: CITY_SCHEMA },
    });
    const body = fake().requests[0]!.body;
    assert.deepEqual(
      body.tools[0].functionDeclarations.map((declaration: { name: string }) => declaration.name),
      ['get_weather'],
    );
    assert.equal(body.generationConfig.responseMimeType, 'application/json');
    assert.deepEqual(Object.keys(body.generationConfig.responseSchema.properties), ['city', 'population']);
  });

  it('sends files as inlineData', async () => {
    await createGateway().generate({
      provider: 'google',
      model: 'gemini-2.5-flash',
      credentials: fake().credentials,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Read' }, { type: 'file', mediaType: 'application/pdf', data: PDF_BYTES }] }],
    });
    assert.deepEqual(fake().requests[0]!.body.contents[0].parts[1], { inlineData: { mimeType: 'application/pdf', data: PDF_BYTES.toString('base64') } });
  });

  it("maps Gemini's 400 API_KEY_INVALID to auth_failed", async () => {
    const error = lastError(
      await collect(
        createGateway().stream({
          provider: 'google',
          model: 'gemini-2.5-flash',
          credentials: fake().wrongCredentials,
          messages: [{ role: 'user', content: 'Hi' }],
        }),
      ),
    );
    assert.equal(error.code, 'auth_failed');
    assert.equal(error.status, 400);
  });
});
