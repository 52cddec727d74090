import { decodeChatCompletionStream } from './chat-completion-stream';
import { ModelCallError } from '../../ports/model-gateway';
import { baseUrlCredential, importAiSdk, optionalCredential, requiredCredential, type ModelVendor } from './model-vendor';

/** The GA data-plane version that serves deployment chat completions; `api_version` overrides it. */
export const AZURE_OPENAI_DEFAULT_API_VERSION = '2024-10-21';

/**
 * Azure OpenAI through deployment URLs:
 * `{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=…` with an `api-key`
 * header. The model names the deployment; `base_url` is the resource endpoint.
 */
export const azureOpenAiVendor: ModelVendor = {
  provider: 'azure-openai',
  decodeStream: decodeChatCompletionStream,
  async languageModel(deployment, credentials, fetch) {
    const apiKey = requiredCredential('azure-openai', credentials, 'api_key');
    const baseURL = baseUrlCredential('azure-openai', credentials, '/openai');
    const resourceName = optionalCredential('azure-openai', credentials, 'resource_name');
    if (baseURL === undefined && resourceName === undefined) {
      throw ModelCallError.providerNotConfigured('azure-openai', 'credentials need resource_name or base_url');
    }
    const apiVersion = optionalCredential('azure-openai', credentials, 'api_version') ?? AZURE_OPENAI_DEFAULT_API_VERSION;
    const { createAzure } = await importAiSdk('azure');
    return createAzure({
      apiKey,
      ...(baseURL !== undefined ? { baseURL } : { resourceName }),
      apiVersion,
      useDeploymentBasedUrls: true,
      fetch,
    }).chat(deployment);
  },
};
