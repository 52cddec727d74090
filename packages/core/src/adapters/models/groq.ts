import { createGroq } from '@ai-sdk/groq';
import { baseUrlCredential, requiredCredential, type ModelVendor } from './model-vendor';

/** Groq's OpenAI-compatible API under `/openai/v1`. */
export const groqVendor: ModelVendor = {
  provider: 'groq',
  languageModel(model, credentials) {
    return createGroq({
      apiKey: requiredCredential('groq', credentials, 'api_key'),
      baseURL: baseUrlCredential('groq', credentials, '/openai/v1') ?? 'https://api.groq.com/openai/v1',
    })(model);
  },
};
