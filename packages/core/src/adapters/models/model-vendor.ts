import type { LanguageModel } from 'ai';
import type { HttpClient } from '../../ports/http-client';
import type { ProviderName } from '../../ports/provider-names';
import { ModelCallError, type ModelCredentials } from '../../ports/model-gateway';
import type { CallOptions, StreamDecoder, VendorAnswer } from './vendor-stream';
import { lazyLruCache } from '../../domain/lazy';

/** The `fetch` every vendor request goes through: the `HttpClient` port's, under the egress policy. */
export type VendorFetch = typeof globalThis.fetch;

/** The `HttpClient` port's `fetchWhole`: what a vendor's own `generate` sends through. */
export type WholeFetch = HttpClient['fetchWhole'];

/**
 * One model vendor: builds the AI SDK model of a call from the account's decrypted credentials.
 * A vendor keeps nothing between calls, so credentials live only as long as the call. It imports
 * its `@ai-sdk/*` package on its first call (`importAiSdk`), so a server that never calls that
 * vendor never evaluates it.
 */
export interface ModelVendor {
  readonly provider: ProviderName;
  /**
   * The model, sending every request (streaming or not, to `base_url` or the vendor's own
   * endpoint) through `fetch`. Rejects with `ModelCallError` `provider_not_configured` when a
   * required credential is missing.
   */
  languageModel(model: string, credentials: ModelCredentials, fetch: VendorFetch): Promise<LanguageModel>;
  /**
   * Reads the vendor's streamed answer itself, instead of the SDK model's stream (the lean
   * stream path, see `openVendorStream`); without it, streams are the SDK model's.
   */
  readonly decodeStream?: StreamDecoder;
  /**
   * A non-streaming call the vendor sends itself, as the SDK model would, reading the answer
   * itself (the lean generate path, see `chat-completion-generate.ts`): a function sending it once
   * per attempt, rejecting as the SDK model's `doGenerate` would; undefined for a call it leaves to
   * the SDK model. Throws `ModelCallError` `provider_not_configured` when a required credential
   * is missing.
   */
  generate?(model: string, credentials: ModelCredentials, options: CallOptions, fetchWhole: WholeFetch): (() => Promise<VendorAnswer>) | undefined;
}

type AiSdkPackages = typeof import('./ai-sdk').aiSdkPackages;

const importedAiSdk = new Map<keyof AiSdkPackages, Promise<unknown>>();

/**
 * One AI SDK package (`ai` or a vendor's), loaded on first use from the separately bundled
 * `ai-sdk`. Kept once loaded: every model call asks for its packages, and a dynamic `import()`
 * goes through the module loader again each time, loaded or not.
 */
export function importAiSdk<Name extends keyof AiSdkPackages>(name: Name): ReturnType<AiSdkPackages[Name]> {
  let imported = importedAiSdk.get(name);
  if (!imported) {
    imported = import('./ai-sdk').then(({ aiSdkPackages }): Promise<unknown> => aiSdkPackages[name]());
    // A failed import is tried again by the next call.
    imported.catch(() => importedAiSdk.delete(name));
    importedAiSdk.set(name, imported);
  }
  return imported as ReturnType<AiSdkPackages[Name]>;
}

/** A required credential field: a non-empty string. */
export function requiredCredential(provider: ProviderName, credentials: ModelCredentials, field: string): string {
  const value = optionalCredential(provider, credentials, field);
  if (value === undefined) throw ModelCallError.providerNotConfigured(provider, `credentials need ${field}`);
  return value;
}

export function optionalCredential(
  provider: ProviderName,
  credentials: ModelCredentials,
  field: string,
): string | undefined {
  const value = (credentials as Readonly<Record<string, unknown>>)[field];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw ModelCallError.providerNotConfigured(provider, `${field} must be a string`);
  return value;
}

/**
 * The credentials' `base_url`, with `defaultPath` appended when it names only an origin, so
 * `http://proxy:8080` and `http://proxy:8080/v1` both reach `/v1/...`. Undefined when unset.
 */
export function baseUrlCredential(
  provider: ProviderName,
  credentials: ModelCredentials,
  defaultPath: string,
): string | undefined {
  const baseUrl = optionalCredential(provider, credentials, 'base_url');
  if (baseUrl === undefined) return undefined;
  // A URL with user info carries a credential, which is kept no longer than the call.
  if (baseUrl.includes('@')) return normalizedBaseUrl(provider, baseUrl, defaultPath);
  const key = `${defaultPath} ${baseUrl}`;
  let normalized = normalizedBaseUrls().get(key);
  if (normalized === undefined) {
    normalized = normalizedBaseUrl(provider, baseUrl, defaultPath);
    normalizedBaseUrls().set(key, normalized);
  }
  return normalized;
}

/** `baseUrlCredential`'s answers by default path and `base_url`: an account's calls read the same one again and again (a URL parsed and written each time). */
const normalizedBaseUrls = lazyLruCache<string, string>({ max: 1000 });

function normalizedBaseUrl(provider: ProviderName, baseUrl: string, defaultPath: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw ModelCallError.providerNotConfigured(provider, 'base_url is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw ModelCallError.providerNotConfigured(provider, 'base_url must be an http or https URL');
  }
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path === '' ? defaultPath : path;
  return url.toString().replace(/\/+$/, '');
}
