import { isProviderName, type ProviderName } from '../../ports/provider-names';

/** Well-known model-name families (docs/api.md#configurations); `o1`, `o3-mini`, `o4-mini`, … are OpenAI's. */
const MODEL_FAMILIES: [RegExp, ProviderName][] = [
  [/^(gpt-|o\d)/i, 'openai'],
  [/^claude-/i, 'anthropic'],
  [/^gemini-/i, 'google'],
  [/^(mistral-|codestral-)/i, 'mistral'],
];

export interface ResolvedModel {
  provider: ProviderName;
  /** The model name without a `provider/` prefix. */
  model: string;
}

/**
 * Which vendor serves `model` (docs/api.md#configurations), first found wins: the `provider` given; a
 * `provider/model` prefix naming one of the seven (any other prefix is part of the model name, as
 * in `meta-llama/llama-4`); the model's family; the account's only enabled provider. Undefined
 * when none applies: the caller asks for `provider`.
 */
export function resolveModel(
  model: string,
  provider: ProviderName | undefined,
  enabledProviders: readonly string[],
): ResolvedModel | undefined {
  const slash = model.indexOf('/');
  const prefix = slash > 0 ? model.slice(0, slash) : undefined;
  if (provider) return { provider, model: prefix === provider ? model.slice(slash + 1) : model };
  if (prefix !== undefined && isProviderName(prefix) && slash < model.length - 1) return { provider: prefix, model: model.slice(slash + 1) };
  const family = MODEL_FAMILIES.find(([pattern]) => pattern.test(model));
  if (family) return { provider: family[1], model };
  const [only, ...others] = enabledProviders.filter(isProviderName);
  return only && others.length === 0 ? { provider: only, model } : undefined;
}
