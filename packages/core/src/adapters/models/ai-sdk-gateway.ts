import type { CallWarning, LanguageModel } from 'ai';
import type { ValidateFunction } from 'ajv';
import type { HttpClient } from '../../ports/http-client';
import type { Logger } from '../../ports/logger';
import type { ModelGateway, ModelRequest, ModelResponse, ModelStreamEvent } from '../../ports/model-gateway';
import { credentialScrubber, toModelCallError } from './model-call-errors';
import type { VendorFetch, WholeFetch } from './model-vendor';
import type { ModelVendors } from './model-vendors';
import {
  type CallOptions,
  callOptions,
  compileResponseSchema,
  type LanguageModelV3,
  openVendorStream,
  sdkAnswer,
  structuredObject,
  toolCall,
  type VendorAnswer,
  type VendorStreamEvent,
  withRetries,
} from './vendor-stream';

export interface AiSdkModelGatewayOptions {
  /** Every vendor request goes through its `fetch` (or `fetchWhole`, for the calls a vendor sends itself), under the egress policy. */
  http: Pick<HttpClient, 'fetch' | 'fetchWhole'>;
  /** Retries of a failed request (429, 5xx, network) with the SDK's exponential backoff; default 2. */
  maxRetries?: number;
  /** Receives the vendor's call warnings (an unsupported setting, …). */
  logger?: Logger;
}

/** The signal of a call nobody can abort. */
const NEVER_ABORTED = new AbortController().signal;

/**
 * `ModelGateway` over the AI SDK's vendor models, without `generateText` or `streamText` (whose
 * prompt checks, telemetry and step machinery cost more CPU than the vendor call itself, and which
 * add nothing to one step): `generate` sends the call itself where the vendor covers it
 * (`ModelVendor.generate`, the lean path) and else calls the model's `doGenerate` (the vendor's
 * non-streaming endpoint); `stream` calls its `doStream`, and reads the answer with the vendor's
 * wire decoder where it has one (`openVendorStream`). Both build the call options alike
 * (`callOptions`) and retry a retryable failure as the SDK does (`withRetries`). The vendor adapter
 * builds the model from the call's credentials and sends through the `HttpClient` port's `fetch`
 * (the lean path through its `fetchWhole`), so vendor calls obey the same egress policy as every
 * other outbound request. One step only: tools have no `execute`, so tool calls come back to the caller's
 * agent loop.
 */
export class AiSdkModelGateway implements ModelGateway {
  private readonly fetch: VendorFetch;
  private readonly fetchWhole: WholeFetch;

  constructor(
    private readonly vendors: ModelVendors,
    private readonly options: AiSdkModelGatewayOptions,
  ) {
    this.fetch = (input, init) => options.http.fetch(input, init);
    this.fetchWhole = (url, init) => options.http.fetchWhole(url, init);
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    const { provider } = request;
    const scrub = credentialScrubber(request.credentials);
    try {
      request.signal?.throwIfAborted();
      const validate = request.responseSchema ? compileResponseSchema(provider, request.responseSchema.schema) : undefined;
      const vendor = this.vendors.get(provider);
      const signal = request.signal ?? NEVER_ABORTED;
      const options = callOptions(request, signal);
      // The vendor sends the calls it covers itself (the lean path); the SDK model sends the rest.
      const send =
        vendor.generate?.(request.model, request.credentials, options, this.fetchWhole) ??
        (await this.sdkGenerate(vendor.languageModel(request.model, request.credentials, this.fetch), options));
      const result = await withRetries(send, request.maxRetries ?? this.options.maxRetries ?? 2, signal);
      this.reportWarnings(request, result.warnings);
      let text = '';
      const toolCalls: ModelResponse['toolCalls'] = [];
      for (const part of result.content) {
        if (part.type === 'text') text += part.text;
        else {
          const call = toolCall(part.toolCallId, part.toolName, part.input);
          if (call.type === 'error') throw call.error;
          if (call.type === 'tool-call') toolCalls.push({ toolCallId: call.toolCallId, toolName: call.toolName, input: call.input });
        }
      }
      return {
        text,
        toolCalls,
        ...(validate ? { object: structuredObject(provider, text, validate, scrub) } : {}),
        finishReason: result.finishReason,
        usage: result.usage,
      };
    } catch (error) {
      throw await toModelCallError(provider, error, request.signal, scrub);
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

  /** The call sent by the SDK model: `doGenerate`, once per attempt. */
  private async sdkGenerate(languageModel: Promise<LanguageModel>, options: CallOptions): Promise<() => Promise<VendorAnswer>> {
    const model = (await languageModel) as LanguageModelV3;
    return async () => sdkAnswer(await model.doGenerate(options));
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
