import assert from 'node:assert/strict';
import { startFakeVendors, type FakeVendorServer } from '../../testing/fake-vendors';
import { PROVIDER_NAMES, type ProviderName } from '../../ports/provider-names';
import type { ModelGateway, ModelRequest } from '../../ports/model-gateway';
import { callError, collect, lastError } from '../model-gateway.contract';
import { GuardedHttpClient } from '../node/guarded-http-client';
import { AiSdkModelGateway } from './ai-sdk-gateway';
import { ModelVendors } from './model-vendors';

/**
 * Every vendor request leaves through the HttpClient's fetch: a base_url or a vendor's own endpoint
 * that the egress policy refuses gets `egress_refused` naming the flags, and nothing is sent.
 */
describe('model vendors under the egress policy', () => {
  let fakes: Map<string, FakeVendorServer>;
  before(async () => {
    fakes = await startFakeVendors();
  });
  after(async () => {
    await Promise.all([...fakes.values()].map((fake) => fake.close()));
  });
  beforeEach(() => {
    for (const fake of fakes.values()) fake.reset();
  });

  const request = (provider: ProviderName, credentials: object): ModelRequest => ({
    provider,
    model: fakes.get(provider)!.model,
    credentials,
    messages: [{ role: 'user', content: 'Hi' }],
  });

  async function refusals(gateway: ModelGateway, call: ModelRequest): Promise<string[]> {
    const generated = await callError(gateway.generate(call));
    const streamed = lastError(await collect(gateway.stream(call)));
    for (const error of [generated, streamed]) {
      assert.equal(error.code, 'egress_refused', error.message);
      assert.equal(error.provider, call.provider);
    }
    return [generated.message, streamed.message];
  }

  it('refuses a loopback base_url of each of the seven vendors, streaming or not, sending nothing', async () => {
    const gateway = new AiSdkModelGateway(new ModelVendors(), { http: new GuardedHttpClient({ egress: { allowPrivateNetwork: false } }), maxRetries: 2 });
    for (const provider of PROVIDER_NAMES) {
      const fake = fakes.get(provider)!;
      const port = new URL(fake.baseUrl).port;
      for (const message of await refusals(gateway, request(provider, fake.credentials))) {
        assert.match(message, new RegExp(`^${provider} call was not sent: 127\\.0\\.0\\.1 is a loopback address.*--egress-allow 127\\.0\\.0\\.1:${port} .*--allow-private-network`));
      }
      assert.equal(fake.requests.length, 0, `${provider} received a request`);
    }
  });

  it('sends to an allowed destination and to nothing else', async () => {
    const openai = fakes.get('openai')!;
    const http = new GuardedHttpClient({ egress: { allowPrivateNetwork: false, allow: [new URL(openai.baseUrl).host] } });
    const gateway = new AiSdkModelGateway(new ModelVendors(), { http, maxRetries: 0 });
    assert.equal((await gateway.generate(request('openai', openai.credentials))).text, 'Hello from openai');
    assert.equal(openai.requests.length, 1);
    const anthropic = fakes.get('anthropic')!;
    await refusals(gateway, request('anthropic', anthropic.credentials));
    assert.equal(anthropic.requests.length, 0);
  });

  it("checks each vendor's own endpoint too (Azure's resource host, Bedrock's regional host)", async () => {
    const asked: string[] = [];
    // A resolver whose every answer is loopback: what a poisoned or split-horizon DNS would do.
    const http = new GuardedHttpClient({
      egress: { allowPrivateNetwork: false },
      resolve: async (hostname) => {
        asked.push(hostname);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    const gateway = new AiSdkModelGateway(new ModelVendors(), { http, maxRetries: 0 });
    const defaults: Record<ProviderName, [object, string]> = {
      openai: [{ api_key: 'sk-test-1234' }, 'api.openai.com'],
      anthropic: [{ api_key: 'sk-ant-1234' }, 'api.anthropic.com'],
      google: [{ api_key: 'g-key-1234' }, 'generativelanguage.googleapis.com'],
      'azure-openai': [{ api_key: 'az-key-1234', resource_name: 'contoso' }, 'contoso.openai.azure.com'],
      mistral: [{ api_key: 'm-key-1234' }, 'api.mistral.ai'],
      'aws-bedrock': [{ region: 'eu-west-3', access_key_id: 'AKIATEST1234', secret_access_key: 'secret-1234' }, 'bedrock-runtime.eu-west-3.amazonaws.com'],
      groq: [{ api_key: 'gsk-1234' }, 'api.groq.com'],
    };
    for (const provider of PROVIDER_NAMES) {
      const [credentials, host] = defaults[provider];
      asked.length = 0;
      for (const message of await refusals(gateway, request(provider, credentials))) {
        assert.ok(message.includes(`${host} resolves to 127.0.0.1, a loopback address`), message);
      }
      assert.deepEqual([...new Set(asked)], [host]);
    }
  });
});
