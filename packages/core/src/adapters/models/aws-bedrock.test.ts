import assert from 'node:assert/strict';
import { bedrockModelOf, type BedrockProtocol } from '../../testing/fake-vendors/aws-bedrock';
import { verifySigV4 } from '../../testing/fake-vendors/sigv4';
import { CITY_SCHEMA, describeModelGatewayContract, PNG_BYTES, useFakeVendor, loopbackHttp } from '../model-gateway.contract';
import { AiSdkModelGateway } from './ai-sdk-gateway';
import { ModelVendors } from './model-vendors';

const createGateway = () => new AiSdkModelGateway(new ModelVendors(), { http: loopbackHttp, maxRetries: 0 });

describeModelGatewayContract('aws-bedrock', createGateway);

describe('aws-bedrock adapter: wire format', () => {
  const fake = useFakeVendor('aws-bedrock');

  it('signs converse requests with SigV4 (scope, date, session token, signature)', async () => {
    const credentials = fake().credentials;
    await createGateway().generate({
      provider: 'aws-bedrock',
      model: 'amazon.nova-lite-v1:0',
      credentials,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hi' }],
      params: { max_tokens: 40, temperature: 0.5, top_p: 0.8, stop: ['END'] },
    });
    const [request] = fake().requests;
    assert.equal(request!.path, '/model/amazon.nova-lite-v1%3A0/converse');
    assert.equal(bedrockModelOf(request!.path), 'amazon.nova-lite-v1:0');
    assert.match(
      String(request!.headers.authorization),
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${credentials.access_key_id}/\\d{8}/eu-west-3/bedrock/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$`),
    );
    assert.match(String(request!.headers['x-amz-date']), /^\d{8}T\d{6}Z$/);
    assert.equal(request!.headers['x-amz-security-token'], credentials.session_token);
    assert.deepEqual(request!.body.system, [{ text: 'Be brief.' }]);
    assert.deepEqual(request!.body.messages, [{ role: 'user', content: [{ text: 'Hi' }] }]);
    assert.deepEqual(request!.body.inferenceConfig, { maxTokens: 40, temperature: 0.5, topP: 0.8, stopSequences: ['END'] });

    const keys = { accessKeyId: credentials.access_key_id!, secretAccessKey: credentials.secret_access_key!, sessionToken: credentials.session_token };
    const scope = { region: 'eu-west-3', service: 'bedrock' };
    assert.deepEqual(verifySigV4(request!, keys, scope), { ok: true });
    // The verifier is strict: another secret, a changed body or a stale date all fail.
    assert.equal(verifySigV4(request!, { ...keys, secretAccessKey: 'other-secret' }, scope).ok, false);
    assert.equal(verifySigV4({ ...request!, rawBody: Buffer.from(`${request!.rawBody.toString()} `) }, keys, scope).ok, false);
    assert.equal(verifySigV4(request!, keys, scope, new Date(Date.now() + 20 * 60_000)).ok, false);
    assert.equal(verifySigV4(request!, keys, { ...scope, region: 'us-east-1' }).ok, false);
  });

  it('sends a Bedrock API key as a bearer token instead of signing', async () => {
    const credentials = (fake().protocol as BedrockProtocol).apiKeyCredentials(fake().baseUrl);
    const response = await createGateway().generate({
      provider: 'aws-bedrock',
      model: 'amazon.nova-lite-v1:0',
      credentials,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    assert.equal(response.text, 'Hello from aws-bedrock');
    const [request] = fake().requests;
    assert.equal(request!.headers.authorization, `Bearer ${credentials.api_key}`);
    assert.equal(request!.headers['x-amz-date'], undefined);
  });

  it('gets structured output through a forced json tool and sends images as image blocks', async () => {
    fake().reply({ type: 'json', value: { city: 'Cork', population: 224004 } });
    const response = await createGateway().generate({
      provider: 'aws-bedrock',
      model: 'amazon.nova-lite-v1:0',
      credentials: fake().credentials,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Which city?' }, { type: 'file', mediaType: 'image/png', data: PNG_BYTES }] }],
      responseSchema: { schema: CITY_SCHEMA },
    });
    assert.deepEqual(response.object, { city: 'Cork', population: 224004 });
    const body = fake().requests[0]!.body;
    assert.deepEqual(body.toolConfig.toolChoice, { any: {} });
    assert.deepEqual(body.toolConfig.tools[0].toolSpec.inputSchema.json, CITY_SCHEMA);
    assert.deepEqual(body.messages[0].content[1], { image: { format: 'png', source: { bytes: PNG_BYTES.toString('base64') } } });
  });
});
