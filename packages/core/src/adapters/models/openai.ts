import { decodeChatCompletionStream } from './chat-completion-stream';
import { baseUrlCredential, importAiSdk, requiredCredential, type ModelVendor } from './model-vendor';

/** OpenAI chat completions (`.chat`: the Responses API is not what compatible servers speak). */
export const openaiVendor: ModelVendor = {
  provider: 'openai',
  decodeStream: decodeChatCompletionStream,
  async languageModel(model, credentials, fetch) {
    const apiKey = requiredCredential('openai', credentials, 'api_key');
    const baseURL = baseUrlCredential('openai', credentials, '/v1') ?? 'https://api.openai.com/v1';
    const { createOpenAI } = await importAiSdk('openai');
    return createOpenAI({ apiKey, baseURL, fetch }).chat(model);
  },
};
