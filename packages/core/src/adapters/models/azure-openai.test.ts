import assert from 'node:assert/strict';
import { azureDeploymentOf } from '../../testing/fake-vendors/azure-openai';
import { collect, describeModelGatewayContract, lastError, useFakeVendor, loopbackHttp } from '../model-gateway.contract';
import { AiSdkModelGateway } from './ai-sdk-gateway';
import { AZURE_OPENAI_DEFAULT_API_VERSION } from './azure-openai';
import { ModelVendors } from './model-vendors';

const createGateway = () => new AiSdkModelGateway(new ModelVendors(), { http: loopbackHttp, maxRetries: 0 });

describeModelGatewayContract('azure-openai', createGateway);

describe('azure-openai adapter: wire format', () => {
  const fake = useFakeVendor('azure-openai');

  it('posts to /openai/deployments/{deployment}/chat/completions?api-version=… with an api-key header', async () => {
    await createGateway().generate({
      provider: 'azure-openai',
      model: 'prod-gpt-4o',
      credentials: fake().credentials,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const [request] = fake().requests;
    assert.equal(request!.path, '/openai/deployments/prod-gpt-4o/chat/completions');
    assert.equal(azureDeploymentOf(request!.path), 'prod-gpt-4o');
    assert.equal(request!.query.get('api-version'), AZURE_OPENAI_DEFAULT_API_VERSION);
    assert.equal(request!.headers['api-key'], fake().credentials.api_key);
    assert.equal(request!.headers.authorization, undefined, 'Azure keys go in api-key, not a bearer token');
    assert.equal(request!.body.stream, undefined, 'generate asks for a whole answer');
  });

  it('uses the configured api_version and a base_url that already ends in /openai', async () => {
    await createGateway().generate({
      provider: 'azure-openai',
      model: 'prod-gpt-4o',
      credentials: { ...fake().credentials, base_url: `${fake().baseUrl}/openai/`, api_version: '2025-04-01-preview' },
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const [request] = fake().requests;
    assert.equal(request!.path, '/openai/deployments/prod-gpt-4o/chat/completions');
    assert.equal(request!.query.get('api-version'), '2025-04-01-preview');
  });

  it('needs resource_name or base_url', async () => {
    const error = lastError(
      await collect(
        createGateway().stream({
          provider: 'azure-openai',
          model: 'prod-gpt-4o',
          credentials: { api_key: fake().credentials.api_key! },
          messages: [{ role: 'user', content: 'Hi' }],
        }),
      ),
    );
    assert.equal(error.code, 'provider_not_configured');
    assert.match(error.message, /resource_name or base_url/);
  });
});
