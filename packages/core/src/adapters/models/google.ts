import { baseUrlCredential, importAiSdk, requiredCredential, type ModelVendor } from './model-vendor';

/** Gemini API (`models/{model}:generateContent`, or `:streamGenerateContent?alt=sse`; `x-goog-api-key`). */
export const googleVendor: ModelVendor = {
  provider: 'google',
  async languageModel(model, credentials, fetch) {
    const apiKey = requiredCredential('google', credentials, 'api_key');
    const baseURL = baseUrlCredential('google', credentials, '/v1beta') ?? 'https://generativelanguage.googleapis.com/v1beta';
    const { createGoogleGenerativeAI } = await importAiSdk('google');
    return createGoogleGenerativeAI({ apiKey, baseURL, fetch })(model);
  },
};
