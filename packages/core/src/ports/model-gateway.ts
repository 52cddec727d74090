import type { ProviderName } from './provider-names';

/**
 * The `ModelGateway` port: one call to a language model of any of the seven vendors, answered
 * whole (`generate`, the vendor's non-streaming endpoint) or streamed (`stream`).
 *
 * Vendor-neutral on purpose: no vendor library type appears here, so the domain (prompt runs,
 * agents, threads) depends only on this vocabulary. The default adapter (`adapters/models`)
 * speaks each vendor's own wire format through the AI SDK (and reads the chat-completions
 * streams itself).
 *
 * Guarantees an adapter gives:
 * - `generate(request)` resolves with the whole answer or rejects with a `ModelCallError`.
 * - `stream(request)` yields events in order and ends with exactly one terminal event, `finish`
 *   or `error`; iterating never throws. Breaking out of the iteration cancels the vendor request.
 *   Text (and reasoning) deltas that arrived together may come joined in one event.
 * - Credentials are used for this call only and never kept; no error message contains a
 *   credential value.
 * - Aborting `request.signal` stops the vendor request; `generate` then rejects, and the stream
 *   ends, with an error of code `aborted` (or `timeout` when the signal's reason is a `TimeoutError`).
 */
export const ModelGateway = Symbol.for('runloom.ModelGateway');

/**
 * Decrypted credentials of one provider, as stored in the account's provider configuration
 * (docs/api.md#providers). Every provider accepts `base_url`; an origin alone (`http://host:port`) gets the
 * vendor's usual path prefix (`/v1`, `/v1beta`, `/openai/v1`, `/openai`).
 * - openai, anthropic, google, mistral, groq: `{api_key, base_url?}`
 * - azure-openai: `{api_key, resource_name | base_url, api_version?}`; the model names the deployment
 * - aws-bedrock: `{region, access_key_id, secret_access_key, session_token?}` or `{region, api_key}`
 * Adapters check the fields they need at call time (`provider_not_configured` when one is missing).
 */
export type ModelCredentials = object;

/** A JSON Schema (draft 7) object, as written in runnable configs. */
export type JsonSchema = Readonly<Record<string, unknown>>;

export interface TextPart {
  type: 'text';
  text: string;
}

/** Bytes of a file or an image (an image is a file whose `mediaType` is `image/*`). */
export interface FilePart {
  type: 'file';
  mediaType: string;
  data: Uint8Array;
  filename?: string;
}

export interface ToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/** The result of a tool call, sent back to the model. A string output is sent as text. */
export interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: unknown;
  isError?: boolean;
}

export type ModelMessage =
  | { role: 'user'; content: string | (TextPart | FilePart)[] }
  | { role: 'assistant'; content: string | (TextPart | ToolCallPart)[] }
  | { role: 'tool'; content: ToolResultPart[] };

/** Sampling parameters, spelled as in runnable configs; unknown keys are ignored. */
export interface ModelParams {
  temperature?: number;
  max_tokens?: number;
  /** The AI SDK spelling of `max_tokens`; `max_tokens` wins when both are given. */
  maxOutputTokens?: number;
  top_p?: number;
  top_k?: number;
  stop?: string | string[];
  presence_penalty?: number;
  frequency_penalty?: number;
  seed?: number;
}

/** A tool the model may call. The gateway never executes tools: calls come back as events. */
export interface ModelTool {
  name: string;
  description?: string;
  inputSchema: JsonSchema;
}

export type ModelToolChoice = 'auto' | 'required' | 'none' | { toolName: string };

export interface ModelRequest {
  provider: ProviderName;
  /** The vendor's model id (the deployment name for azure-openai). */
  model: string;
  credentials: ModelCredentials;
  system?: string;
  messages: readonly ModelMessage[];
  params?: ModelParams;
  tools?: readonly ModelTool[];
  toolChoice?: ModelToolChoice;
  /** Asks for a JSON object matching `schema`; the response (or the `finish` event) carries it as `object`. */
  responseSchema?: { schema: JsonSchema; name?: string; description?: string };
  signal?: AbortSignal;
  /**
   * Retries inside this call of a failed request (429, 5xx, network), waiting as the vendor asks;
   * default: the gateway's. Runs pass 0 and retry themselves, so a wait holds no vendor slot.
   */
  maxRetries?: number;
}

export interface ModelUsage {
  input_tokens: number;
  output_tokens: number;
}

export type ModelFinishReason = 'stop' | 'length' | 'tool-calls' | 'content-filter' | 'error' | 'other';

export type ModelStreamEvent =
  | { type: 'text-delta'; text: string }
  /** The model's visible reasoning (thinking blocks), when the vendor streams it. */
  | { type: 'reasoning-delta'; text: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'finish'; finishReason: ModelFinishReason; usage: ModelUsage; object?: unknown }
  | { type: 'error'; error: ModelCallError };

export interface ModelResponse {
  text: string;
  toolCalls: { toolCallId: string; toolName: string; input: unknown }[];
  /** The structured output, when the request had a `responseSchema`. */
  object?: unknown;
  finishReason: ModelFinishReason;
  usage: ModelUsage;
}

export interface ModelGateway {
  /**
   * One non-streaming call: what runs use, since their outputs are stored when the call ends and
   * a whole answer costs far less to receive than a stream. Rejects with `ModelCallError`.
   */
  generate(request: ModelRequest): Promise<ModelResponse>;
  /** The same call streamed, for callers that show the answer as it arrives. */
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent>;
}

export type ModelCallErrorCode =
  | 'provider_not_configured'
  | 'provider_disabled'
  | 'auth_failed'
  | 'rate_limited'
  | 'bad_request'
  | 'vendor_error'
  /** The vendor's address is refused by the egress policy; nothing was sent. */
  | 'egress_refused'
  | 'aborted'
  | 'timeout';

/** Why a model call failed. The message names the provider and never holds a credential. */
export class ModelCallError extends Error {
  constructor(
    readonly code: ModelCallErrorCode,
    readonly provider: string,
    message: string,
    /** The vendor's HTTP status, when it answered. */
    readonly status?: number,
    /** How long the vendor asked to wait before calling again (`retry-after`, `retry-after-ms`), when it did. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ModelCallError';
  }

  static providerNotConfigured(provider: string, detail?: string): ModelCallError {
    const what = detail ? `: ${detail}` : '';
    return new ModelCallError(
      'provider_not_configured',
      provider,
      `model provider '${provider}' is not configured for this account${what}; set it with PUT /v1/llm-provider/${provider}`,
    );
  }

  static providerDisabled(provider: string): ModelCallError {
    return new ModelCallError(
      'provider_disabled',
      provider,
      `model provider '${provider}' is disabled for this account; enable it with PUT /v1/llm-provider/${provider}`,
    );
  }
}
