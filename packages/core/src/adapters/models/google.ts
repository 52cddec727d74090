import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { baseUrlCredential, requiredCredential, type ModelVendor } from './model-vendor';

/** Gemini API (`models/{model}:streamGenerateContent?alt=sse`, `x-goog-api-key`). */
export const googleVendor: ModelVendor = {
  provider: 'google',
  languageModel(model, credentials) {
    return createGoogleGenerativeAI({
      apiKey: requiredCredential('google', credentials, 'api_key'),
      baseURL: baseUrlCredential('google', credentials, '/v1beta') ?? 'https://generativelanguage.googleapis.com/v1beta',
    })(model);
  },
};
