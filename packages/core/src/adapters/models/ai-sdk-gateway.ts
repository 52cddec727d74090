import type { CallWarning, JSONSchema7, JSONValue, LanguageModel, ModelMessage as SdkMessage, ToolChoice, ToolSet } from 'ai';
import type { ValidateFunction } from 'ajv';
import type { HttpClient } from '../../ports/http-client';
import type { Logger } from '../../ports/logger';
import {
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
import { compileResponseSchema, describeSchemaErrors, openVendorStream, structuredObject, type VendorStreamEvent } from './vendor-stream';

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
 * non-streaming endpoint); `stream` calls the vendor model's `doStream` without `streamText`, and
 * reads the answer with the vendor's wire decoder where it has one (`openVendorStream`). The vendor adapter builds the model from the call's
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
      let events: AsyncIterable<VendorStreamEvent>;
      let validate: ValidateFunction | undefined;
      try {
        const vendor = this.vendors.get(provider);
        validate = request.responseSchema ? compileResponseSchema(provider, request.responseSchema.schema) : undefined;
        events = await openVendorStream(
          {
            fetch: this.fetch,
            languageModel: (fetch) => vendor.languageModel(request.model, request.credentials, fetch),
            decodeStream: vendor.decodeStream,
            maxRetries: request.maxRetries ?? this.options.maxRetries ?? 2,
            reportWarnings: (warnings) => this.reportWarnings(request, warnings),
          },
          request,
          abortSignal,
        );
      } catch (error) {
        yield await failure(error);
        return;
      }
      // The structured output is the whole text, checked once it has all come.
      let text = '';
      for await (const event of errorsAsParts(events)) {
        switch (event.type) {
          case 'text-delta':
            if (validate) text += event.text;
            yield event;
            break;
          case 'reasoning-delta':
          case 'tool-call':
            yield event;
            break;
          case 'error':
            yield await failure(event.error);
            return;
          case 'finish': {
            let object: unknown;
            try {
              object = validate ? structuredObject(provider, text, validate, scrub) : undefined;
            } catch (error) {
              yield await failure(error);
              return;
            }
            yield end({ ...event, ...(validate ? { object } : {}) });
            return;
          }
        }
      }
      yield await failure(new Error('the stream ended without a finish'));
    } finally {
      if (!ended) cancel.abort();
    }
  }

  /** What `generateText` takes: the prompt, tools, output and settings. */
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
  const validate = compileResponseSchema(provider, responseSchema.schema);
  const schema = ai.jsonSchema(responseSchema.schema as JSONSchema7, {
    validate: (value) =>
      validate(value)
        ? { success: true, value }
        : { success: false, error: new Error(describeSchemaErrors(validate.errors ?? [])) },
  });
  return ai.Output.object({ schema, name: responseSchema.name, description: responseSchema.description });
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
