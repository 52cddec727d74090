import type { CallWarning, JSONSchema7, JSONValue, LanguageModel, ModelMessage as SdkMessage, ToolChoice, ToolSet } from 'ai';
import type { ValidateFunction } from 'ajv';
import { compileJsonSchema } from '../../domain/runnables/json-schema';
import type { HttpClient } from '../../ports/http-client';
import type { Logger } from '../../ports/logger';
import {
  ModelCallError,
  type ModelGateway,
  type ModelMessage,
  type ModelParams,
  type ModelRequest,
  type ModelResponse,
  type ModelStreamEvent,
  type ModelToolChoice,
  type ToolResultPart,
} from '../../ports/model-gateway';
import { credentialScrubber, toModelCallError } from './model-call-errors';
import { importAiSdk, type VendorFetch } from './model-vendor';
import type { ModelVendors } from './model-vendors';

export interface AiSdkModelGatewayOptions {
  /** Every vendor request goes through its `fetch`, under the egress policy. */
  http: Pick<HttpClient, 'fetch'>;
  /** Retries of a failed request (429, 5xx, network) with the SDK's exponential backoff; default 2. */
  maxRetries?: number;
  /** Receives the vendor's call warnings (an unsupported setting, …). */
  logger?: Logger;
}

/** The `ai` package, imported on the first model call rather than when the server starts. */
type AiSdk = typeof import('ai');

let warmedAiSdk: Promise<AiSdk> | undefined;

/**
 * The `ai` package, with its prompt check warmed once. The SDK checks every call's messages
 * against a fresh `z.array(modelMessageSchema)`, and zod first walks that schema to learn whether
 * it is recursive; the answer is cached only once the lazy JSON-value schema inside has been
 * resolved, which happens only when some message carries `providerOptions`. Ours never do, so each
 * call re-walked the whole message schema (the top cost in a --cpu-prof of the run path; ~190 µs a
 * call against ~26 µs once warm, in plain Node). Checking one such message once resolves it; later
 * walks hit zod's cache.
 */
function loadAiSdk(): Promise<AiSdk> {
  warmedAiSdk ??= importAiSdk('ai').then((ai) => {
    ai.modelMessageSchema.safeParse({ role: 'user', content: '', providerOptions: { warm: { value: [null] } } });
    return ai;
  });
  return warmedAiSdk;
}

/**
 * `ModelGateway` over the AI SDK: `generate` is one `generateText` call (the vendor's
 * non-streaming endpoint), `stream` is `streamText` with `fullStream` parts becoming port events
 * (`textStream` would swallow errors). The vendor adapter builds the model from the call's
 * credentials and sends through the `HttpClient` port's `fetch`, so vendor calls obey the same
 * egress policy as every other outbound request. One step only: tools have no `execute`, so tool calls come back to the caller's
 * agent loop.
 */
export class AiSdkModelGateway implements ModelGateway {
  private readonly fetch: VendorFetch;

  constructor(
    private readonly vendors: ModelVendors,
    private readonly options: AiSdkModelGatewayOptions,
  ) {
    this.fetch = (input, init) => options.http.fetch(input, init);
    // Warnings are reported per call below; the SDK would also print them to the console, unless
    // the host has chosen its own handling of this process-wide setting.
    globalThis.AI_SDK_LOG_WARNINGS ??= false;
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    const { provider } = request;
    try {
      request.signal?.throwIfAborted();
      const model = await this.vendors.get(provider).languageModel(request.model, request.credentials, this.fetch);
      const ai = await loadAiSdk();
      const result = await ai.generateText({
        ...this.callOptions(ai, model, request),
        abortSignal: request.signal,
        // Nothing reads the bodies back; keeping them would only hold memory until the run ends.
        experimental_include: { requestBody: false, responseBody: false },
      });
      this.reportWarnings(request, result.warnings);
      return {
        text: result.text,
        toolCalls: result.toolCalls.map((call) => ({ toolCallId: call.toolCallId, toolName: call.toolName, input: call.input })),
        // Checked against the schema inside generateText; reading it throws when the model gave none.
        ...(request.responseSchema ? { object: result.output as unknown } : {}),
        finishReason: result.finishReason,
        usage: { input_tokens: result.totalUsage.inputTokens ?? 0, output_tokens: result.totalUsage.outputTokens ?? 0 },
      };
    } catch (error) {
      throw await toModelCallError(provider, error, request.signal, credentialScrubber(request.credentials));
    }
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent, void, undefined> {
    const { provider } = request;
    const scrub = credentialScrubber(request.credentials);
    // Aborted when the caller stops iterating before the end, so the vendor request does not linger.
    const cancel = new AbortController();
    const abortSignal = request.signal ? AbortSignal.any([request.signal, cancel.signal]) : cancel.signal;
    let ended = false;
    const end = (event: ModelStreamEvent): ModelStreamEvent => {
      ended = true;
      return event;
    };
    const failure = async (error: unknown): Promise<ModelStreamEvent> =>
      end({ type: 'error', error: await toModelCallError(provider, error, request.signal, scrub) });
    try {
      if (request.signal?.aborted) {
        yield await failure(request.signal.reason);
        return;
      }
      let result;
      try {
        const model = await this.vendors.get(provider).languageModel(request.model, request.credentials, this.fetch);
        const ai = await loadAiSdk();
        result = ai.streamText({
          ...this.callOptions(ai, model, request),
          abortSignal,
          // Errors arrive as `error` parts of fullStream; the default handler would also log them.
          onError: () => {},
        });
      } catch (error) {
        yield await failure(error);
        return;
      }
      for await (const part of errorsAsParts(result.fullStream)) {
        switch (part.type) {
          case 'start-step':
            this.reportWarnings(request, part.warnings);
            break;
          case 'text-delta':
            if (part.text !== '') yield { type: 'text-delta', text: part.text };
            break;
          case 'reasoning-delta':
            if (part.text !== '') yield { type: 'reasoning-delta', text: part.text };
            break;
          case 'tool-call':
            yield { type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input };
            break;
          case 'error':
            yield await failure(part.error);
            return;
          case 'abort':
            yield await failure(request.signal?.reason ?? new DOMException('the model call was aborted', 'AbortError'));
            return;
          case 'finish': {
            let object: unknown;
            if (request.responseSchema) {
              try {
                object = await result.output;
              } catch (error) {
                yield await failure(error);
                return;
              }
            }
            yield end({
              type: 'finish',
              // The port's finish reasons are the SDK's; the compiler flags any the SDK adds.
              finishReason: part.finishReason,
              usage: { input_tokens: part.totalUsage.inputTokens ?? 0, output_tokens: part.totalUsage.outputTokens ?? 0 },
              ...(request.responseSchema ? { object } : {}),
            });
            return;
          }
        }
      }
      yield await failure(new Error('the stream ended without a finish'));
    } finally {
      if (!ended) cancel.abort();
    }
  }

  /** What `generateText` and `streamText` both take: the prompt, tools, output and settings. */
  private callOptions(ai: AiSdk, model: LanguageModel, request: ModelRequest) {
    return {
      model,
      system: request.system,
      messages: request.messages.map(toSdkMessage),
      tools: toSdkTools(ai, request),
      toolChoice: request.toolChoice === undefined ? undefined : toSdkToolChoice(request.toolChoice),
      output: request.responseSchema ? structuredOutput(ai, request.provider, request.responseSchema) : undefined,
      ...callSettings(request.params),
      maxRetries: request.maxRetries ?? this.options.maxRetries ?? 2,
    };
  }

  private reportWarnings(request: ModelRequest, warnings: readonly CallWarning[] | undefined): void {
    for (const warning of warnings ?? []) {
      this.options.logger?.warn({ provider: request.provider, model: request.model, warning }, 'model call warning');
    }
  }
}

/**
 * The parts of `stream`, where a read that throws (the response body failing mid-stream, as when
 * the caller aborts with a reason of its own) ends it with an `error` part, as the SDK reports
 * other failures: so iterating `stream` of the gateway never throws.
 */
async function* errorsAsParts<T>(stream: AsyncIterable<T>): AsyncGenerator<T | { type: 'error'; error: unknown }, void, undefined> {
  try {
    yield* stream;
  } catch (error) {
    yield { type: 'error', error };
  }
}

function toSdkMessage(message: ModelMessage): SdkMessage {
  switch (message.role) {
    case 'user':
      return {
        role: 'user',
        content:
          typeof message.content === 'string'
            ? message.content
            : message.content.map((part) =>
                part.type === 'text'
                  ? { type: 'text', text: part.text }
                  : { type: 'file', data: part.data, mediaType: part.mediaType, ...(part.filename ? { filename: part.filename } : {}) },
              ),
      };
    case 'assistant':
      return {
        role: 'assistant',
        content:
          typeof message.content === 'string'
            ? message.content
            : message.content.map((part) =>
                part.type === 'text'
                  ? { type: 'text', text: part.text }
                  : { type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input },
              ),
      };
    case 'tool':
      return {
        role: 'tool',
        content: message.content.map((part) => ({
          type: 'tool-result',
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          output: toToolOutput(part),
        })),
      };
  }
}

function toToolOutput(part: ToolResultPart) {
  const value = part.output;
  if (typeof value === 'string') return part.isError ? { type: 'error-text' as const, value } : { type: 'text' as const, value };
  const json = (value ?? null) as JSONValue;
  return part.isError ? { type: 'error-json' as const, value: json } : { type: 'json' as const, value: json };
}

function toSdkTools(ai: AiSdk, request: ModelRequest): ToolSet | undefined {
  if (!request.tools?.length) return undefined;
  return Object.fromEntries(
    request.tools.map((definition) => [
      definition.name,
      ai.tool({ description: definition.description, inputSchema: ai.jsonSchema(definition.inputSchema as JSONSchema7) }),
    ]),
  );
}

function toSdkToolChoice(choice: ModelToolChoice): ToolChoice<ToolSet> {
  return typeof choice === 'string' ? choice : { type: 'tool', toolName: choice.toolName };
}

/** Structured output: the vendor's JSON mode with the schema, and the answer checked against it. */
function structuredOutput(ai: AiSdk, provider: string, responseSchema: NonNullable<ModelRequest['responseSchema']>) {
  let validate: ValidateFunction;
  try {
    validate = compileJsonSchema(responseSchema.schema as Record<string, unknown>);
  } catch (error) {
    throw new ModelCallError('bad_request', provider, `the response schema for ${provider} is not a valid JSON Schema: ${(error as Error).message}`);
  }
  const schema = ai.jsonSchema(responseSchema.schema as JSONSchema7, {
    validate: (value) =>
      validate(value)
        ? { success: true, value }
        : { success: false, error: new Error(describeSchemaErrors(validate.errors ?? [])) },
  });
  return ai.Output.object({ schema, name: responseSchema.name, description: responseSchema.description });
}

function describeSchemaErrors(errors: readonly { instancePath: string; message?: string }[]): string {
  return errors.map((error) => `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`).join('; ');
}

function callSettings(params: ModelParams = {}) {
  return {
    temperature: params.temperature,
    maxOutputTokens: params.max_tokens ?? params.maxOutputTokens,
    topP: params.top_p,
    topK: params.top_k,
    stopSequences: typeof params.stop === 'string' ? [params.stop] : params.stop,
    presencePenalty: params.presence_penalty,
    frequencyPenalty: params.frequency_penalty,
    seed: params.seed,
  };
}
