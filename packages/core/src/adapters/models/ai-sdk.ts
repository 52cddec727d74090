/**
 * The AI SDK packages, each imported on its first use. esbuild.mjs bundles this module on its own
 * (`ai-sdk.js` beside each bundle holding the core) and keeps the core's imports of it external,
 * so until the first model call none of the SDK's ~2.9 MB of code is even parsed: bundled inline,
 * behind lazy initialisers, it still cost ~20 MB of RSS at start. Import it through `importAiSdk`.
 */
export const aiSdkPackages: {
  // Declared, not inferred: the inferred types spell out every export of the SDK in our .d.ts,
  // naming packages (@ai-sdk/provider, @ai-sdk/gateway) that are not dependencies of ours.
  ai: () => Promise<typeof import('ai')>;
  amazonBedrock: () => Promise<typeof import('@ai-sdk/amazon-bedrock')>;
  anthropic: () => Promise<typeof import('@ai-sdk/anthropic')>;
  azure: () => Promise<typeof import('@ai-sdk/azure')>;
  google: () => Promise<typeof import('@ai-sdk/google')>;
  groq: () => Promise<typeof import('@ai-sdk/groq')>;
  mistral: () => Promise<typeof import('@ai-sdk/mistral')>;
  openai: () => Promise<typeof import('@ai-sdk/openai')>;
  providerUtils: () => Promise<typeof import('@ai-sdk/provider-utils')>;
} = {
  ai: () => import('ai'),
  amazonBedrock: () => import('@ai-sdk/amazon-bedrock'),
  anthropic: () => import('@ai-sdk/anthropic'),
  azure: () => import('@ai-sdk/azure'),
  google: () => import('@ai-sdk/google'),
  groq: () => import('@ai-sdk/groq'),
  mistral: () => import('@ai-sdk/mistral'),
  openai: () => import('@ai-sdk/openai'),
  providerUtils: () => import('@ai-sdk/provider-utils'),
};
