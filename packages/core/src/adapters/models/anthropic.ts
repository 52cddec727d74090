import { baseUrlCredential, importAiSdk, requiredCredential, type ModelVendor } from './model-vendor';

/** Anthropic Messages API (`/v1/messages`, `x-api-key`). */
export const anthropicVendor: ModelVendor = {
  provider: 'anthropic',
  async languageModel(model, credentials, fetch) {
    const apiKey = requiredCredential('anthropic', credentials, 'api_key');
    const baseURL = baseUrlCredential('anthropic', credentials, '/v1') ?? 'https://api.anthropic.com/v1';
    const { createAnthropic } = await importAiSdk('anthropic');
    return createAnthropic({ apiKey, baseURL, fetch })(model);
  },
};
