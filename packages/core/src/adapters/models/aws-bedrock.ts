import { baseUrlCredential, importAiSdk, optionalCredential, requiredCredential, type ModelVendor } from './model-vendor';

/**
 * Amazon Bedrock Converse API (`/model/{modelId}/converse`, or `/converse-stream` with an AWS event stream), signed with
 * SigV4 from access keys or authorised with a Bedrock API key.
 */
export const awsBedrockVendor: ModelVendor = {
  provider: 'aws-bedrock',
  async languageModel(model, credentials, fetch) {
    const region = requiredCredential('aws-bedrock', credentials, 'region');
    const baseURL = baseUrlCredential('aws-bedrock', credentials, '/');
    const apiKey = optionalCredential('aws-bedrock', credentials, 'api_key');
    const settings =
      apiKey !== undefined
        ? { region, baseURL, apiKey }
        : {
            region,
            baseURL,
            // An empty key keeps the SDK from picking up AWS_BEARER_TOKEN_BEDROCK from the host's env.
            apiKey: '',
            accessKeyId: requiredCredential('aws-bedrock', credentials, 'access_key_id'),
            secretAccessKey: requiredCredential('aws-bedrock', credentials, 'secret_access_key'),
            sessionToken: optionalCredential('aws-bedrock', credentials, 'session_token'),
          };
    const { createAmazonBedrock } = await importAiSdk('amazonBedrock');
    return createAmazonBedrock({ ...settings, fetch })(model);
  },
};
