import { createAnthropic } from '@ai-sdk/anthropic';
import { baseUrlCredential, requiredCredential, type ModelVendor } from './model-vendor';

/** Anthropic Messages API (`/v1/messages`, `x-api-key`). */
export const anthropicVendor: ModelVendor = {
  provider: 'anthropic',
  languageModel(model, credentials) {
    return createAnthropic({
      apiKey: requiredCredential('anthropic', credentials, 'api_key'),
      baseURL: baseUrlCredential('anthropic', credentials, '/v1') ?? 'https://api.anthropic.com/v1',
    })(model);
  },
};
