import { type Context, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Clock } from '../../ports/clock';
import type { ModelResponse } from '../../ports/model-gateway';
import type { RunError, RunRecord, RunTrace, TraceModelCall, TraceStep } from './run-record';
import { describeFailure } from './run-failure';

/**
 * The telemetry of one run (docs/api.md#runs). When on, every step and model call is recorded into the
 * run's `trace` and emitted as an OpenTelemetry span through `@opentelemetry/api` (a no-op unless
 * the host registers a tracer provider). When off, nothing is recorded and no span is started.
 */
export interface RunTelemetry {
  /** Runs `work` as a named step; `work` gets the telemetry its own steps nest under. */
  step<T>(name: string, kind: TraceStep['kind'], work: (telemetry: RunTelemetry) => Promise<T>): Promise<T>;
  /** Times one model call made by step `step`. */
  modelCall(step: string, provider: string, model: string, call: () => Promise<ModelResponse>): Promise<ModelResponse>;
}

export const NO_TELEMETRY: RunTelemetry = {
  step: (_name, _kind, work) => work(NO_TELEMETRY),
  modelCall: (_step, _provider, _model, call) => call(),
};

const TRACER_NAME = 'runloom';

/** Records a run's trace and spans; `finish` ends the run span and answers the trace. */
export class RecordingTelemetry {
  private readonly steps: TraceStep[] = [];
  private readonly modelCalls: TraceModelCall[] = [];
  private readonly runSpan: Span;
  private readonly runStartedAt: string;
  private readonly runStartedMs = performance.now();

  constructor(
    private readonly clock: Clock,
    run: RunRecord,
  ) {
    this.runStartedAt = clock.now().toISOString();
    this.runSpan = trace.getTracer(TRACER_NAME).startSpan(
      'runloom.run',
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          'runloom.run.id': run.id,
          'runloom.account.id': run.account_id,
          'runloom.runnable.id': run.runnable_id,
          'runloom.runnable.name': run.runnable_snapshot.name,
          'runloom.runnable.type': run.runnable_snapshot.config_content_type,
        },
      },
      ROOT_CONTEXT,
    );
  }

  /** The telemetry the run's top-level steps nest under. */
  get root(): RunTelemetry {
    return new NestedTelemetry(this, trace.setSpan(ROOT_CONTEXT, this.runSpan));
  }

  /** Ends the run span with the run's final status and answers the recorded trace. */
  finish(status: RunRecord['status'], error: RunError | null): RunTrace {
    this.runSpan.setAttribute('runloom.run.status', status);
    if (error) this.runSpan.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    this.runSpan.end();
    const run: TraceStep = {
      name: 'run',
      kind: 'run',
      started_at: this.runStartedAt,
      ended_at: this.clock.now().toISOString(),
      latency_ms: elapsedMs(this.runStartedMs),
      status: status === 'succeeded' ? 'succeeded' : 'failed',
      error,
    };
    return { steps: [run, ...this.steps], model_calls: this.modelCalls };
  }

  /** Records a step; its entry takes its place in the list when it starts, so steps read in start order. */
  async recordStep<T>(parent: Context, name: string, kind: TraceStep['kind'], work: (telemetry: RunTelemetry) => Promise<T>): Promise<T> {
    const span = trace.getTracer(TRACER_NAME).startSpan(`runloom.step ${name}`, { attributes: { 'runloom.step.name': name, 'runloom.step.kind': kind } }, parent);
    const entry: TraceStep = { name, kind, started_at: this.clock.now().toISOString(), ended_at: '', latency_ms: 0, status: 'succeeded', error: null };
    this.steps.push(entry);
    const startedMs = performance.now();
    try {
      return await work(new NestedTelemetry(this, trace.setSpan(parent, span)));
    } catch (error) {
      entry.status = 'failed';
      entry.error = describeFailure(error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: entry.error.message });
      throw error;
    } finally {
      entry.ended_at = this.clock.now().toISOString();
      entry.latency_ms = elapsedMs(startedMs);
      span.end();
    }
  }

  /** Records a model call with the GenAI semantic-convention attributes on its span. */
  async recordModelCall(parent: Context, step: string, provider: string, model: string, call: () => Promise<ModelResponse>): Promise<ModelResponse> {
    const span = trace.getTracer(TRACER_NAME).startSpan(
      `chat ${model}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': provider,
          'gen_ai.system': provider,
          'gen_ai.request.model': model,
          'runloom.step.name': step,
        },
      },
      parent,
    );
    const entry: TraceModelCall = {
      step,
      provider,
      model,
      started_at: this.clock.now().toISOString(),
      latency_ms: 0,
      input_tokens: 0,
      output_tokens: 0,
      finish_reason: null,
      error: null,
    };
    this.modelCalls.push(entry);
    const startedMs = performance.now();
    try {
      const response = await call();
      entry.input_tokens = response.usage.input_tokens;
      entry.output_tokens = response.usage.output_tokens;
      entry.finish_reason = response.finishReason;
      span.setAttributes({
        'gen_ai.usage.input_tokens': response.usage.input_tokens,
        'gen_ai.usage.output_tokens': response.usage.output_tokens,
        'gen_ai.response.finish_reasons': [response.finishReason],
      });
      return response;
    } catch (error) {
      entry.error = describeFailure(error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: entry.error.message });
      span.setAttribute('error.type', entry.error.code);
      throw error;
    } finally {
      entry.latency_ms = elapsedMs(startedMs);
      span.end();
    }
  }
}

/** The telemetry seen inside one span: new steps and calls become its children. */
class NestedTelemetry implements RunTelemetry {
  constructor(
    private readonly recorder: RecordingTelemetry,
    private readonly parent: Context,
  ) {}

  step<T>(name: string, kind: TraceStep['kind'], work: (telemetry: RunTelemetry) => Promise<T>): Promise<T> {
    return this.recorder.recordStep(this.parent, name, kind, work);
  }

  modelCall(step: string, provider: string, model: string, call: () => Promise<ModelResponse>): Promise<ModelResponse> {
    return this.recorder.recordModelCall(this.parent, step, provider, model, call);
  }
}

function elapsedMs(startedMs: number): number {
  return Math.round((performance.now() - startedMs) * 1000) / 1000;
}
