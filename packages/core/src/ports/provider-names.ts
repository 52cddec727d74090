/**
 * The model vendors an account can configure and a runnable can name, in their
 * order (docs/api.md#providers). Listings follow this order.
 */
export const PROVIDER_NAMES = ['openai', 'anthropic', 'google', 'azure-openai', 'mistral', 'aws-bedrock', 'groq'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export function isProviderName(name: string): name is ProviderName {
  return (PROVIDER_NAMES as readonly string[]).includes(name);
}
