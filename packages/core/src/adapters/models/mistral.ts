import { decodeChatCompletionStream } from './chat-completion-stream';
import { baseUrlCredential, importAiSdk, requiredCredential, type ModelVendor } from './model-vendor';

/** Mistral chat completions (`/v1/chat/completions`, bearer key). */
export const mistralVendor: ModelVendor = {
  provider: 'mistral',
  decodeStream: decodeChatCompletionStream,
  async languageModel(model, credentials, fetch) {
    const apiKey = requiredCredential('mistral', credentials, 'api_key');
    const baseURL = baseUrlCredential('mistral', credentials, '/v1') ?? 'https://api.mistral.ai/v1';
    const { createMistral } = await importAiSdk('mistral');
    return createMistral({ apiKey, baseURL, fetch })(model);
  },
};
