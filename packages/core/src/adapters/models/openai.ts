import { chatCompletionBody, sendChatCompletion } from './chat-completion-generate';
import { decodeChatCompletionStream } from './chat-completion-stream';
import { baseUrlCredential, importAiSdk, requiredCredential, type ModelVendor } from './model-vendor';
import type { ModelCredentials } from '../../ports/model-gateway';

/** The base URL of the calls: the credentials' `base_url`, else OpenAI's. */
function baseUrl(credentials: ModelCredentials): string {
  return baseUrlCredential('openai', credentials, '/v1') ?? 'https://api.openai.com/v1';
}

/** OpenAI chat completions (`.chat`: the Responses API is not what compatible servers speak). */
export const openaiVendor: ModelVendor = {
  provider: 'openai',
  decodeStream: decodeChatCompletionStream,
  async languageModel(model, credentials, fetch) {
    const apiKey = requiredCredential('openai', credentials, 'api_key');
    const baseURL = baseUrl(credentials);
    const { createOpenAI } = await importAiSdk('openai');
    return createOpenAI({ apiKey, baseURL, fetch }).chat(model);
  },
  generate(model, credentials, options, fetchWhole) {
    const body = chatCompletionBody(model, options);
    if (body === undefined) return undefined;
    const apiKey = requiredCredential('openai', credentials, 'api_key');
    const url = `${baseUrl(credentials)}/chat/completions`;
    return async () => {
      const { VERSION } = await importAiSdk('openai');
      return sendChatCompletion({ url, headers: { authorization: `Bearer ${apiKey}` }, userAgent: `ai-sdk/openai/${VERSION}` }, body, fetchWhole, options.abortSignal);
    };
  },
};
