import type { WholeResponse } from '../../ports/http-client';
import { FINISH_REASONS } from './chat-completion-stream';
import { importAiSdk, type WholeFetch } from './model-vendor';
import type { CallOptions, VendorAnswer } from './vendor-stream';

/**
 * The lean generate path of OpenAI's chat completions (ARCHITECTURE.md, the `ModelGateway` row):
 * for the calls it covers, the gateway sends the request the AI SDK's OpenAI chat model would
 * send, byte for byte (URL, headers, body), through `HttpClient.fetchWhole`, and reads the answer
 * itself as that model reads it, without the SDK's per-call header objects, web `Response`,
 * response schema checks and result building (~90 µs of CPU a call, a third of the call's vendor
 * side). Failures are the `APICallError`s the SDK would throw, so retries (`withRetries`) and the
 * mapping to `ModelCallError`s are the SDK path's; finish reasons are read as the chat-completion
 * stream decoder reads them. `chat-completion-generate.test.ts` sends each case both ways.
 *
 * Covered: text messages (system, user, assistant), the sampling parameters but `top_k`, on a
 * model the SDK sends unchanged (not a reasoning or search-preview model). Tools, files,
 * structured output, tool results and those models are the SDK model's: they take rules of its
 * own and may warn. OpenAI only: Azure OpenAI's SDK chat model is an older copy of OpenAI's (it
 * reads a refusal as an empty answer, the test showed), and Groq's and Mistral's are models of
 * their own.
 */

/** The chat completion request body of a covered call; undefined when the call is not covered. */
export function chatCompletionBody(modelId: string, options: CallOptions): Record<string, unknown> | undefined {
  if (options.topK !== undefined || options.tools?.length || options.toolChoice !== undefined || options.responseFormat !== undefined) return undefined;
  if (!sentUnchanged(modelId)) return undefined;
  const messages: Record<string, unknown>[] = [];
  for (const message of options.prompt) {
    if (message.role === 'system') {
      messages.push({ role: 'system', content: message.content });
      continue;
    }
    if (message.role !== 'user' && message.role !== 'assistant') return undefined;
    const texts: string[] = [];
    for (const part of message.content) {
      if (part.type !== 'text') return undefined;
      texts.push(part.text);
    }
    if (message.role === 'assistant') messages.push({ role: 'assistant', content: texts.join('') });
    else messages.push({ role: 'user', content: texts.length === 1 ? texts[0] : texts.map((text) => ({ type: 'text', text })) });
  }
  // The SDK's key order: JSON.stringify leaves out what is undefined.
  return {
    model: modelId,
    max_tokens: options.maxOutputTokens,
    temperature: options.temperature,
    top_p: options.topP,
    frequency_penalty: options.frequencyPenalty,
    presence_penalty: options.presencePenalty,
    stop: options.stopSequences,
    seed: options.seed,
    messages,
  };
}

/**
 * Whether the SDK sends this model's parameters and system messages as given: it rewrites them
 * for reasoning models (o-series, GPT-5 and later but their chat variants) and search-preview
 * models (its `getOpenAILanguageModelCapabilities`).
 */
function sentUnchanged(modelId: string): boolean {
  if (/^o\d+(?:-|$)/.test(modelId)) return false;
  if (modelId.startsWith('gpt-4o-search-preview') || modelId.startsWith('gpt-4o-mini-search-preview')) return false;
  const gpt = /^gpt-(\d+)(?:\.(\d+))?(?:-(.+))?$/.exec(modelId);
  if (gpt === null || Number(gpt[1]) < 5) return true;
  // A GPT-5-or-later chat model (`gpt-5-chat-latest`, no minor version) is not a reasoning model.
  return gpt[2] === undefined && (gpt[3]?.startsWith('chat') ?? false);
}

/** Decodes answers (one decoder for all: making one per answer cost more than decoding it). */
const UTF8 = new TextDecoder();

/** Where a covered call goes and the headers of the vendor's SDK provider (before the common ones). */
export interface ChatCompletionTarget {
  url: string;
  /** The provider's own headers, e.g. `authorization`. */
  headers: Record<string, string>;
  /** The provider package's part of the user agent, e.g. `ai-sdk/openai/3.0.141`. */
  userAgent: string;
}

/** Sends a covered call and reads its answer as the SDK's chat model does. */
export async function sendChatCompletion(
  target: ChatCompletionTarget,
  body: Record<string, unknown>,
  fetchWhole: WholeFetch,
  signal: AbortSignal | undefined,
): Promise<VendorAnswer> {
  const [{ APICallError, generateId }, { VERSION, getRuntimeEnvironmentUserAgent }] = await Promise.all([importAiSdk('ai'), importAiSdk('providerUtils')]);
  const { url } = target;
  let answer: WholeResponse;
  try {
    answer = await fetchWhole(url, {
      method: 'POST',
      headers: {
        ...target.headers,
        'content-type': 'application/json',
        'user-agent': `${target.userAgent} ai-sdk/provider-utils/${VERSION} ${getRuntimeEnvironmentUserAgent()}`,
      },
      body: JSON.stringify(body),
      signal,
    });
  } catch (error) {
    // The SDK's reading of a fetch that could not reach the vendor: retryable.
    const cause = error instanceof TypeError && error.message === 'fetch failed' ? (error.cause as Error | undefined) : undefined;
    if (cause) throw new APICallError({ message: `Cannot connect to API: ${cause.message}`, cause, url, requestBodyValues: body, isRetryable: true });
    throw error;
  }
  const { status, headers: responseHeaders } = answer;
  const responseBody = UTF8.decode(answer.body);
  if (status < 200 || status > 299) {
    const message = vendorErrorMessage(responseBody) ?? answer.statusText;
    throw new APICallError({ message, url, requestBodyValues: body, statusCode: status, responseHeaders, responseBody });
  }
  let completion: ChatCompletion | undefined;
  try {
    completion = chatCompletion(JSON.parse(responseBody));
  } catch {
    // Not JSON: as a JSON answer failing the schema.
  }
  if (completion === undefined) throw new APICallError({ message: 'Invalid JSON response', url, requestBodyValues: body, statusCode: status, responseHeaders, responseBody });
  return answerOf(completion, generateId);
}

/** `error.message` of an OpenAI error body (`{"error": {"message": …}}`), which the SDK makes the error's message. */
function vendorErrorMessage(body: string): string | undefined {
  if (body.trim() === '') return undefined;
  let error: { message?: unknown; type?: unknown; code?: unknown } | undefined;
  try {
    ({ error } = JSON.parse(body) as { error?: typeof error });
  } catch {
    return undefined;
  }
  // The SDK's error schema: a message, and a type and a code of these types when given.
  if (typeof error?.message !== 'string' || !optional(error.type, 'string')) return undefined;
  return optional(error.code, 'string') || typeof error.code === 'number' ? error.message : undefined;
}

/** A field that is absent, null, or of `type`. */
function optional(field: unknown, type: string): boolean {
  return field === undefined || field === null || typeof field === type;
}

interface ChatCompletion {
  choices: {
    message: {
      content?: string | null;
      refusal?: string | null;
      audio?: { transcript?: string | null } | null;
      tool_calls?: { id?: string | null; function: { name: string; arguments: string } }[] | null;
    };
    finish_reason?: string | null;
  }[];
  usage?: { prompt_tokens?: number | null; completion_tokens?: number | null } | null;
}

/** The answer when it has the fields an answer is read by, with their types; else undefined (as the SDK's schema refuses it). */
function chatCompletion(value: unknown): ChatCompletion | undefined {
  const answer = value as ChatCompletion | null;
  if (typeof answer !== 'object' || answer === null || !Array.isArray(answer.choices)) return undefined;
  for (const choice of answer.choices as unknown[]) {
    const { message, finish_reason: finishReason, index } = (choice ?? {}) as ChatCompletion['choices'][number] & { index?: unknown };
    if (typeof message !== 'object' || message === null || typeof index !== 'number' || !optional(finishReason, 'string')) return undefined;
    if (!optional(message.content, 'string') || !optional(message.refusal, 'string') || !optional(message.audio, 'object')) return undefined;
    if (message.audio && !optional(message.audio.transcript, 'string')) return undefined;
    const toolCalls = message.tool_calls;
    if (toolCalls !== undefined && toolCalls !== null) {
      if (!Array.isArray(toolCalls)) return undefined;
      for (const call of toolCalls as unknown[]) {
        const { id, function: called, type } = (call ?? {}) as { id?: unknown; function?: { name?: unknown; arguments?: unknown }; type?: unknown };
        if (type !== 'function' || !optional(id, 'string') || typeof called?.name !== 'string' || typeof called.arguments !== 'string') return undefined;
      }
    }
  }
  const usage = answer.usage as Record<string, unknown> | null | undefined;
  if (!optional(usage, 'object') || (usage && (!optional(usage.prompt_tokens, 'number') || !optional(usage.completion_tokens, 'number')))) return undefined;
  return answer;
}

/** What the SDK's chat model makes of an answer: its text (the refusal after it), tool calls, finish reason and tokens. */
function answerOf(completion: ChatCompletion, generateId: () => string): VendorAnswer {
  const choice = completion.choices[0];
  if (choice === undefined) throw new Error('Response did not contain any choices.');
  const { message } = choice;
  const content: VendorAnswer['content'][number][] = [];
  const text = message.content ? message.content : message.audio?.transcript;
  if (text) content.push({ type: 'text', text });
  if (message.refusal) content.push({ type: 'text', text: message.refusal });
  for (const call of message.tool_calls ?? []) {
    content.push({ type: 'tool-call', toolCallId: call.id ?? generateId(), toolName: call.function.name, input: call.function.arguments });
  }
  const finishReason = FINISH_REASONS[choice.finish_reason ?? ''] ?? 'other';
  return {
    content,
    // A refusal ends as the vendor's content filter.
    finishReason: finishReason === 'stop' && message.refusal ? 'content-filter' : finishReason,
    usage: { input_tokens: completion.usage?.prompt_tokens ?? 0, output_tokens: completion.usage?.completion_tokens ?? 0 },
    warnings: [],
  };
}
