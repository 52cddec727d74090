import type { APICallError } from 'ai';
import { EgressRefusedError } from '../../ports/http-client';
import { ModelCallError, type ModelCredentials } from '../../ports/model-gateway';
import { importAiSdk } from './model-vendor';

/** Credential fields that are addresses or names, not secrets. */
const PUBLIC_FIELDS = new Set(['base_url', 'region', 'resource_name', 'api_version']);

const MAX_VENDOR_MESSAGE = 300;

/**
 * Removes every credential value from text that may echo one (vendor messages, causes). The values
 * are listed on first use: most calls fail in no way that needs it, and listing them (a `base_url`
 * parsed for its user info) was a few µs of every call.
 */
export function credentialScrubber(credentials: ModelCredentials): (text: string) => string {
  let secrets: string[] | undefined;
  return (text) => (secrets ??= secretsOf(credentials)).reduce((scrubbed, secret) => scrubbed.split(secret).join('[redacted]'), text);
}

/** The credential values that are secrets, longest first (so a secret containing another is removed whole). */
function secretsOf(credentials: ModelCredentials): string[] {
  const secrets: string[] = [];
  for (const [field, value] of Object.entries(credentials)) {
    if (typeof value !== 'string' || value.length < 4) continue;
    if (!PUBLIC_FIELDS.has(field)) secrets.push(value);
    else if (field === 'base_url') secrets.push(...urlUserInfo(value));
  }
  return secrets.sort((a, b) => b.length - a.length);
}

/**
 * Maps whatever a model call threw (AI SDK errors, fetch failures, aborts) to a `ModelCallError`
 * naming `provider`, with the vendor's status when it answered and no credential in the message.
 * Async because the AI SDK's error classes load with the SDK, on the first model call.
 */
export async function toModelCallError(
  provider: string,
  error: unknown,
  signal: AbortSignal | undefined,
  scrub: (text: string) => string,
): Promise<ModelCallError> {
  if (error instanceof ModelCallError) return error;
  // Refused before anything was sent; the message names the address and the flags that let it in.
  if (error instanceof EgressRefusedError) return new ModelCallError('egress_refused', provider, `${provider} call was not sent: ${error.message}`);
  if (signal?.aborted || isAbortError(error)) {
    return isTimeout(signal?.reason) || isTimeout(error)
      ? new ModelCallError('timeout', provider, `${provider} call timed out`)
      : new ModelCallError('aborted', provider, `${provider} call was aborted`);
  }
  const ai = await importAiSdk('ai');
  if (ai.RetryError.isInstance(error)) return toModelCallError(provider, error.lastError, signal, scrub);
  if (ai.APICallError.isInstance(error)) return fromApiCallError(provider, error, scrub);
  if (ai.NoObjectGeneratedError.isInstance(error)) {
    // The innermost cause says what is wrong: unparsable JSON, or which field breaks the schema.
    const reason = scrub(describe(innermostCause(error)));
    return new ModelCallError('vendor_error', provider, `${provider} answered without an object matching the response schema: ${reason}`);
  }
  const message = scrub(describe(error));
  if (
    ai.UnsupportedFunctionalityError.isInstance(error) ||
    ai.InvalidPromptError.isInstance(error) ||
    ai.InvalidArgumentError.isInstance(error)
  ) {
    return new ModelCallError('bad_request', provider, `${provider} cannot take this request: ${message}`);
  }
  return new ModelCallError('vendor_error', provider, `${provider} call failed: ${message}`);
}

function fromApiCallError(provider: string, error: APICallError, scrub: (text: string) => string): ModelCallError {
  const status = error.statusCode;
  const vendorMessage = scrub(describe(error));
  if (status === undefined) {
    if (causeChain(error).some(isTimeout)) return new ModelCallError('timeout', provider, `${provider} did not answer in time (${hostOf(error.url)})`);
    // No socket error (refused, reset, unreachable, no such name): telling them apart would let
    // runs probe which ports answer on the networks the server reaches.
    return new ModelCallError('vendor_error', provider, `${provider} could not be reached at ${hostOf(error.url)}`);
  }
  // Gemini answers a wrong key with 400 API_KEY_INVALID rather than 401.
  if (status === 401 || status === 403 || (status === 400 && /API_KEY_INVALID/.test(error.responseBody ?? ''))) {
    // The vendor's own text is left out: some echo part of the key they refused.
    return new ModelCallError('auth_failed', provider, `${provider} rejected the credentials (HTTP ${status}); check the ${provider} provider configuration`, status);
  }
  const retryAfterMs = retryAfter(error.responseHeaders);
  if (status === 429) return new ModelCallError('rate_limited', provider, `${provider} rate limit reached (HTTP 429): ${vendorMessage}`, status, retryAfterMs);
  if (status === 408 || status === 504) return new ModelCallError('timeout', provider, `${provider} timed out (HTTP ${status}): ${vendorMessage}`, status);
  if (status >= 400 && status < 500) {
    return new ModelCallError('bad_request', provider, `${provider} rejected the request (HTTP ${status}): ${vendorMessage}`, status);
  }
  return new ModelCallError('vendor_error', provider, `${provider} failed (HTTP ${status}): ${vendorMessage}`, status, retryAfterMs);
}

/** The longest back-off a vendor's header is taken at (a bogus day-long value must not stall an account). */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

/** The wait a vendor asks for: `retry-after-ms` (OpenAI, Azure), else `retry-after` in seconds or as an HTTP date. */
export function retryAfter(headers: Record<string, string> | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const header = (name: string): string | undefined => headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  const ms = Number(header('retry-after-ms'));
  if (header('retry-after-ms') !== undefined && Number.isFinite(ms) && ms >= 0) return Math.min(ms, MAX_RETRY_AFTER_MS);
  const value = header('retry-after')?.trim();
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.min(seconds * 1000, MAX_RETRY_AFTER_MS) : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.min(Math.max(0, date - now), MAX_RETRY_AFTER_MS);
}

function describe(error: unknown): string {
  const text =
    error instanceof Error
      ? error.message
      : typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string'
        ? (error as { message: string }).message
        : String(error);
  return text.length > MAX_VENDOR_MESSAGE ? `${text.slice(0, MAX_VENDOR_MESSAGE)}…` : text;
}

/** `error`, its `cause`, the cause's cause…: fetch hides the socket error two levels down. */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current !== undefined && current !== null && chain.length < 5; ) {
    chain.push(current);
    current = current instanceof Error ? current.cause : undefined;
  }
  return chain;
}

function innermostCause(error: unknown): unknown {
  return causeChain(error).at(-1);
}

function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}

function isTimeout(value: unknown): boolean {
  if (!(value instanceof Error)) return false;
  const code = (value as { code?: unknown }).code;
  return value.name === 'TimeoutError' || (typeof code === 'string' && /TIMEOUT/.test(code));
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'its endpoint';
  }
}

function urlUserInfo(value: string): string[] {
  try {
    const url = new URL(value);
    return [url.username, url.password, decodeURIComponent(url.password)].filter((part) => part.length >= 4);
  } catch {
    return [];
  }
}
