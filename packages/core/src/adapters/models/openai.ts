import { createOpenAI } from '@ai-sdk/openai';
import { baseUrlCredential, requiredCredential, type ModelVendor } from './model-vendor';

/** OpenAI chat completions (`.chat`: the Responses API is not what compatible servers speak). */
export const openaiVendor: ModelVendor = {
  provider: 'openai',
  languageModel(model, credentials) {
    return createOpenAI({
      apiKey: requiredCredential('openai', credentials, 'api_key'),
      baseURL: baseUrlCredential('openai', credentials, '/v1') ?? 'https://api.openai.com/v1',
    }).chat(model);
  },
};
