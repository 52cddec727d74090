import type { CallWarning, LanguageModel } from 'ai';
import type { ValidateFunction } from 'ajv';
import { compileJsonSchema } from '../../domain/runnables/json-schema';
import {
  ModelCallError,
  type ModelFinishReason,
  type ModelMessage,
  type ModelRequest,
  type ModelStreamEvent,
  type ModelUsage,
  type TextPart,
} from '../../ports/model-gateway';
import { retryAfter } from './model-call-errors';
import { importAiSdk, type VendorFetch } from './model-vendor';

/**
 * The stream path of the gateway, without `streamText` (ARCHITECTURE.md, "Thread streams"): the
 * vendor's AI SDK model builds, signs and sends the request (`doStream`), and its HTTP errors are
 * the SDK's, as for `generate`; then
 * - a vendor with a wire decoder (`ModelVendor.decodeStream`) has its answer's bytes read by that
 *   decoder, which yields one event per run of deltas in one socket read (the SDK's per-chunk
 *   schema checks and stream transforms cost ~2.6× the parsing itself);
 * - any other vendor's events are the SDK model's own stream parts.
 */

/** The AI SDK model interface every vendor package returns (specification v3). */
export type LanguageModelV3 = Extract<LanguageModel, { specificationVersion: 'v3' }>;
export type CallOptions = Parameters<LanguageModelV3['doStream']>[0];
type StreamPart = Awaited<ReturnType<LanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer Part> ? Part : never;

/**
 * What a vendor stream yields before the gateway checks it: the port's events, an error as thrown
 * (mapped to a `ModelCallError` by the gateway), the finish without the structured output.
 */
export type VendorStreamEvent =
  | Extract<ModelStreamEvent, { type: 'text-delta' | 'reasoning-delta' | 'tool-call' }>
  | { type: 'finish'; finishReason: ModelFinishReason; usage: ModelUsage }
  | { type: 'error'; error: unknown };

/**
 * A non-streaming answer as the gateway reads it: the SDK model's (`sdkAnswer`), or a vendor's own
 * reading of it (`ModelVendor.generate`). Tool inputs are still their JSON text.
 */
export interface VendorAnswer {
  content: ({ type: 'text'; text: string } | { type: 'tool-call'; toolCallId: string; toolName: string; input: string })[];
  finishReason: ModelFinishReason;
  usage: ModelUsage;
  warnings: readonly CallWarning[];
}

/** The SDK model's `doGenerate` result as a `VendorAnswer`: its text and tool-call parts (sources, files… are not the port's). */
export function sdkAnswer(result: Awaited<ReturnType<LanguageModelV3['doGenerate']>>): VendorAnswer {
  const content: VendorAnswer['content'] = [];
  for (const part of result.content) {
    if (part.type === 'text') content.push({ type: 'text', text: part.text });
    else if (part.type === 'tool-call') content.push({ type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
  }
  return { content, finishReason: result.finishReason.unified, usage: portUsage(result.usage), warnings: result.warnings };
}

/** Reads a vendor's streamed answer body: its wire format, decoded. */
export type StreamDecoder = (body: ReadableStream<Uint8Array>) => AsyncIterable<VendorStreamEvent>;

/** Where a stream's events come from, and how the vendor model is reached. */
export interface VendorStreamSource {
  fetch: VendorFetch;
  languageModel(fetch: VendorFetch): Promise<LanguageModel>;
  decodeStream?: StreamDecoder;
  maxRetries: number;
  reportWarnings(warnings: readonly CallWarning[]): void;
}

/**
 * Sends the streamed call, retrying a retryable failure (429, 5xx, network) as the SDK does, and
 * answers its events. Rejects with what the SDK threw when the vendor refused the call.
 *
 * A vendor with a wire decoder is read from the moment its successful answer arrives, and the SDK
 * gets its empty copy of that answer only once the decoder's first event has been taken (or the
 * reading stopped, or the call was aborted): the SDK's handling of it (its headers, a stream
 * pipeline over the empty body) is nothing the decoder needs, and would otherwise run on the way
 * to the first delta. The call warnings are reported once it is done.
 */
export async function openVendorStream(source: VendorStreamSource, request: ModelRequest, abortSignal: AbortSignal): Promise<AsyncIterable<VendorStreamEvent>> {
  const { decodeStream } = source;
  let answered!: (body: ReadableStream<Uint8Array>) => void;
  const answerBody = new Promise<ReadableStream<Uint8Array>>((resolve) => (answered = resolve));
  let firstEventTaken!: () => void;
  const sdkMayGo = new Promise<void>((resolve) => (firstEventTaken = resolve));
  if (decodeStream) abortSignal.addEventListener('abort', firstEventTaken, { once: true });
  const fetch = decodeStream ? keepingAnswerBody(source.fetch, answered, sdkMayGo) : source.fetch;
  const model = (await source.languageModel(fetch)) as LanguageModelV3;
  const options = callOptions(request, abortSignal);
  const called = withRetries(() => model.doStream(options), source.maxRetries, abortSignal);
  if (!decodeStream) return sdkEvents((await called).stream, source.reportWarnings);
  const first = await Promise.race([answerBody.then((body) => ({ body })), called]);
  // The SDK answered without a body being kept (a successful answer without one): its stream is what there is.
  if (!('body' in first)) return sdkEvents(first.stream, source.reportWarnings);
  // A successful answer was kept, so the SDK's call succeeds too; its stream holds only its call warnings.
  void called.then(({ stream }) => reportCallWarnings(stream, source.reportWarnings)).catch(() => undefined);
  return afterFirstTaken(decodeStream(first.body), firstEventTaken);
}

/**
 * `events`, calling `taken` once the caller has taken the first (it asks for the next, or stops),
 * or when the iteration ends before. After that, each `next` is the decoder's own, adding no
 * promise per event.
 */
function afterFirstTaken<T>(events: AsyncIterable<T>, taken: () => void): AsyncIterable<T> {
  const inner = events[Symbol.asyncIterator]();
  let firstAsked = false;
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    taken();
  };
  const iterator: AsyncIterator<T> = {
    next: () => {
      if (released) return inner.next();
      if (firstAsked) {
        release();
        return inner.next();
      }
      firstAsked = true;
      return inner.next().then(
        (result) => {
          if (result.done === true) release();
          return result;
        },
        (error: unknown) => {
          release();
          throw error;
        },
      );
    },
    return: (value?: unknown) => {
      release();
      return inner.return ? inner.return(value) : Promise.resolve({ done: true as const, value });
    },
  };
  return { [Symbol.asyncIterator]: () => iterator };
}

/** Reports the call warnings of the SDK's stream over an empty body (its first part), then cancels it. */
async function reportCallWarnings(stream: ReadableStream<StreamPart>, reportWarnings: (warnings: readonly CallWarning[]) => void): Promise<void> {
  const reader = stream.getReader();
  const first = await reader.read();
  if (first.value?.type === 'stream-start') reportWarnings(first.value.warnings);
  await reader.cancel();
}

/**
 * The vendor `fetch` of a call read by a wire decoder: a successful answer's body goes to `keep`,
 * and the SDK gets the same answer with an empty body, once `sdkMayGo` settles, so nothing is
 * parsed twice. Failed answers reach the SDK whole, at once (its error mapping and retry decisions).
 */
function keepingAnswerBody(fetch: VendorFetch, keep: (body: ReadableStream<Uint8Array>) => void, sdkMayGo: Promise<void>): VendorFetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.ok || response.body === null) return response;
    keep(response.body);
    await sdkMayGo;
    const empty = new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    return new Response(empty, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The SDK default: 2 s, doubled at each retry, unless the vendor asks for a wait under a minute. */
const FIRST_RETRY_DELAY_MS = 2000;
const MAX_ASKED_RETRY_DELAY_MS = 60_000;

export async function withRetries<T>(call: () => PromiseLike<T>, maxRetries: number, signal: AbortSignal): Promise<T> {
  const { APICallError } = await importAiSdk('ai');
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= maxRetries || signal.aborted || !APICallError.isInstance(error) || !error.isRetryable) throw error;
      const asked = retryAfter(error.responseHeaders);
      await delay(asked !== undefined && asked < MAX_ASKED_RETRY_DELAY_MS ? asked : FIRST_RETRY_DELAY_MS * 2 ** attempt, signal);
    }
  }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The SDK model's stream parts as events; tool inputs parsed from their JSON text. */
async function* sdkEvents(stream: ReadableStream<StreamPart>, reportWarnings: (warnings: readonly CallWarning[]) => void): AsyncGenerator<VendorStreamEvent> {
  for await (const part of chunksOf(stream)) {
    switch (part.type) {
      case 'stream-start':
        reportWarnings(part.warnings);
        break;
      case 'text-delta':
        if (part.delta !== '') yield { type: 'text-delta', text: part.delta };
        break;
      case 'reasoning-delta':
        if (part.delta !== '') yield { type: 'reasoning-delta', text: part.delta };
        break;
      case 'tool-call':
        yield toolCall(part.toolCallId, part.toolName, part.input);
        break;
      case 'error':
        yield { type: 'error', error: part.error };
        return;
      case 'finish':
        yield {
          type: 'finish',
          finishReason: part.finishReason.unified,
          usage: portUsage(part.usage),
        };
        return;
    }
  }
}

/** The SDK model's token counts (of `doGenerate` or a stream's finish) as the port's usage. */
export function portUsage(usage: Extract<StreamPart, { type: 'finish' }>['usage']): ModelUsage {
  return { input_tokens: usage.inputTokens.total ?? 0, output_tokens: usage.outputTokens.total ?? 0 };
}

/** The chunks of a web stream, which is cancelled when the caller stops before its end. */
async function* chunksOf<T>(stream: ReadableStream<T>): AsyncGenerator<T> {
  const reader = stream.getReader();
  let done = false;
  try {
    for (;;) {
      const read = await reader.read();
      if (read.done) break;
      yield read.value;
    }
    done = true;
  } finally {
    if (!done) reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** A tool call whose input arrived as JSON text (empty text: no arguments); an error when it is not JSON. */
export function toolCall(toolCallId: string, toolName: string, input: string): VendorStreamEvent {
  try {
    return { type: 'tool-call', toolCallId, toolName, input: input.trim() === '' ? {} : (JSON.parse(input) as unknown) };
  } catch {
    return { type: 'error', error: new Error(`the input of the call of tool '${toolName}' is not JSON`) };
  }
}

/** The request as the SDK model's call options: what `streamText` or `generateText` would have built from it. */
export function callOptions(request: ModelRequest, abortSignal: AbortSignal): CallOptions {
  const params = request.params ?? {};
  const choice = request.toolChoice;
  return {
    prompt: [...(request.system !== undefined ? [{ role: 'system' as const, content: request.system }] : []), ...request.messages.map(toPromptMessage)],
    tools: request.tools?.map((tool) => ({ type: 'function', name: tool.name, description: tool.description, inputSchema: tool.inputSchema as never })),
    toolChoice: choice === undefined ? undefined : typeof choice === 'string' ? { type: choice } : { type: 'tool', toolName: choice.toolName },
    responseFormat: request.responseSchema
      ? { type: 'json', schema: request.responseSchema.schema as never, name: request.responseSchema.name, description: request.responseSchema.description }
      : undefined,
    temperature: params.temperature,
    maxOutputTokens: params.max_tokens ?? params.maxOutputTokens,
    topP: params.top_p,
    topK: params.top_k,
    stopSequences: typeof params.stop === 'string' ? [params.stop] : params.stop,
    presencePenalty: params.presence_penalty,
    frequencyPenalty: params.frequency_penalty,
    seed: params.seed,
    abortSignal,
  };
}

function toPromptMessage(message: ModelMessage): CallOptions['prompt'][number] {
  switch (message.role) {
    case 'user':
      return {
        role: 'user',
        content: promptParts(message.content, (part) => ({
          type: 'file' as const,
          data: part.data,
          mediaType: part.mediaType,
          ...(part.filename ? { filename: part.filename } : {}),
        })),
      };
    case 'assistant':
      return {
        role: 'assistant',
        content: promptParts(message.content, (part) => ({ type: 'tool-call' as const, toolCallId: part.toolCallId, toolName: part.toolName, input: part.input })),
      };
    case 'tool':
      return {
        role: 'tool',
        content: message.content.map((part) => {
          const value = part.output;
          const output =
            typeof value === 'string'
              ? { type: part.isError ? ('error-text' as const) : ('text' as const), value }
              : { type: part.isError ? ('error-json' as const) : ('json' as const), value: (value ?? null) as never };
          return { type: 'tool-result' as const, toolCallId: part.toolCallId, toolName: part.toolName, output };
        }),
      };
  }
}

/** A user or assistant message's content as prompt parts: a string is one text part; `toPart` maps the parts other than text. */
function promptParts<Part, PromptPart>(content: string | (TextPart | Part)[], toPart: (part: Part) => PromptPart): ({ type: 'text'; text: string } | PromptPart)[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part) => (isTextPart(part) ? { type: 'text', text: part.text } : toPart(part)));
}

function isTextPart(part: unknown): part is TextPart {
  return (part as { type?: unknown }).type === 'text';
}

/** A response schema compiled for checking the answer; bad_request when it is not a valid JSON Schema. */
export function compileResponseSchema(provider: string, schema: object): ValidateFunction {
  try {
    return compileJsonSchema(schema as Record<string, unknown>);
  } catch (error) {
    throw new ModelCallError('bad_request', provider, `the response schema for ${provider} is not a valid JSON Schema: ${(error as Error).message}`);
  }
}

/**
 * The streamed text as the structured output: vendor_error when it is not JSON matching the
 * schema (the reason scrubbed: a parse error quotes the text).
 */
export function structuredObject(provider: string, text: string, validate: ValidateFunction, scrub: (text: string) => string): unknown {
  const fail = (reason: string): ModelCallError =>
    new ModelCallError('vendor_error', provider, `${provider} answered without an object matching the response schema: ${scrub(reason)}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw fail((error as Error).message);
  }
  if (!validate(value)) throw fail(describeSchemaErrors(validate.errors ?? []));
  return value;
}

function describeSchemaErrors(errors: readonly { instancePath: string; message?: string }[]): string {
  return errors.map((error) => `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`).join('; ');
}
