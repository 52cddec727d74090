import { decodeChatCompletionStream } from './chat-completion-stream';
import { baseUrlCredential, importAiSdk, requiredCredential, type ModelVendor } from './model-vendor';

/** Groq's OpenAI-compatible API under `/openai/v1`. */
export const groqVendor: ModelVendor = {
  provider: 'groq',
  decodeStream: decodeChatCompletionStream,
  async languageModel(model, credentials, fetch) {
    const apiKey = requiredCredential('groq', credentials, 'api_key');
    const baseURL = baseUrlCredential('groq', credentials, '/openai/v1') ?? 'https://api.groq.com/openai/v1';
    const { createGroq } = await importAiSdk('groq');
    return createGroq({ apiKey, baseURL, fetch })(model);
  },
};
