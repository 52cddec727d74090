import { PROVIDER_NAMES, type ProviderName } from '../../ports/provider-names';
import { ModelCallError } from '../../ports/model-gateway';
import { anthropicVendor } from './anthropic';
import { awsBedrockVendor } from './aws-bedrock';
import { azureOpenAiVendor } from './azure-openai';
import { googleVendor } from './google';
import { groqVendor } from './groq';
import type { ModelVendor } from './model-vendor';
import { mistralVendor } from './mistral';
import { openaiVendor } from './openai';

/** The seven vendors, in the providers' order (docs/api.md#providers). */
export const defaultModelVendors: readonly ModelVendor[] = [
  openaiVendor,
  anthropicVendor,
  googleVendor,
  azureOpenAiVendor,
  mistralVendor,
  awsBedrockVendor,
  groqVendor,
];

/** The registry every vendor adapter plugs into: one adapter per provider name. */
export class ModelVendors {
  private readonly byProvider = new Map<string, ModelVendor>();

  constructor(vendors: readonly ModelVendor[] = defaultModelVendors) {
    for (const vendor of vendors) {
      if (this.byProvider.has(vendor.provider)) throw new Error(`two model vendors for '${vendor.provider}'`);
      this.byProvider.set(vendor.provider, vendor);
    }
  }

  /** Providers served, in the providers' order. */
  get providers(): ProviderName[] {
    return PROVIDER_NAMES.filter((provider) => this.byProvider.has(provider));
  }

  get(provider: string): ModelVendor {
    const vendor = this.byProvider.get(provider);
    if (!vendor) {
      throw new ModelCallError('bad_request', provider, `unknown model provider '${provider.slice(0, 100)}'; use one of ${PROVIDER_NAMES.join(', ')}`);
    }
    return vendor;
  }
}
