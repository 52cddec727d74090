import { createMistral } from '@ai-sdk/mistral';
import { baseUrlCredential, requiredCredential, type ModelVendor } from './model-vendor';

/** Mistral chat completions (`/v1/chat/completions`, bearer key). */
export const mistralVendor: ModelVendor = {
  provider: 'mistral',
  languageModel(model, credentials) {
    return createMistral({
      apiKey: requiredCredential('mistral', credentials, 'api_key'),
      baseURL: baseUrlCredential('mistral', credentials, '/v1') ?? 'https://api.mistral.ai/v1',
    })(model);
  },
};
