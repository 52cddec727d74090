import assert from 'node:assert/strict';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startFakeVendor, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { createRunnable, promptConfig, submit, useFakeVendor, type Json } from './support/runs';

describe('run telemetry', function () {
  this.timeout(20_000);
  let t: TestRunloom;
  let openai: FakeVendorServer;
  const exporter = new InMemorySpanExporter();

  before(async () => {
    // What a host does to receive Runloom's spans: register a tracer provider with the OpenTelemetry API.
    assert.equal(trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })), true);
    openai = await startFakeVendor('openai');
    // The fake listens on loopback: let exactly it in, as --egress-allow does for a self-hosted vendor.
    t = await startTestRunloom({ egressAllow: [new URL(openai.baseUrl).host] });
    await useFakeVendor(t, openai);
  });
  after(async () => {
    trace.disable();
    await t?.close();
    await openai?.close();
  });
  beforeEach(() => {
    exporter.reset();
    openai.reset();
  });

  async function runSync(config: Json, body: Json = {}): Promise<Json> {
    const runnable = await createRunnable(t, config);
    const response = await submit(t, runnable.id, body, { mode: 'sync' });
    assert.equal(response.status, 200);
    const run = (await response.json()) as Json;
    assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
    return run;
  }

  const spansOf = (runId: string): ReadableSpan[] => {
    const root = exporter.getFinishedSpans().find((span) => span.attributes['runloom.run.id'] === runId);
    return root ? exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === root.spanContext().traceId) : [];
  };

  it('force: records the trace on the run and emits run, step and model-call spans with gen_ai attributes', async () => {
    openai.reply({ type: 'text', chunks: ['traced'], usage: { input: 30, output: 5 } });
    const run = await runSync(promptConfig(openai, undefined, { name: 'greeter', telemetry: false }), { telemetry_strategy: 'force' });
    assert.equal(run.telemetry_enabled, true);
    assert.deepEqual(
      run.trace.steps.map((step: Json) => [step.name, step.kind, step.status]),
      [
        ['run', 'run', 'succeeded'],
        ['greeter', 'prompt', 'succeeded'],
      ],
    );
    for (const step of run.trace.steps) assert.ok(step.latency_ms >= 0 && step.started_at <= step.ended_at);
    assert.equal(run.trace.model_calls.length, 1);
    const call = run.trace.model_calls[0];
    assert.deepEqual(
      [call.step, call.provider, call.model, call.input_tokens, call.output_tokens, call.finish_reason, call.error],
      ['greeter', 'openai', openai.model, 30, 5, 'stop', null],
    );
    assert.ok(call.latency_ms > 0);

    const spans = spansOf(run.id);
    const byName = new Map(spans.map((span) => [span.name, span]));
    assert.deepEqual([...byName.keys()].sort(), [`chat ${openai.model}`, 'runloom.run', 'runloom.step greeter']);
    const runSpan = byName.get('runloom.run')!;
    const stepSpan = byName.get('runloom.step greeter')!;
    const chatSpan = byName.get(`chat ${openai.model}`)!;
    assert.equal(runSpan.parentSpanContext, undefined);
    assert.equal(stepSpan.parentSpanContext?.spanId, runSpan.spanContext().spanId);
    assert.equal(chatSpan.parentSpanContext?.spanId, stepSpan.spanContext().spanId);
    assert.equal(runSpan.attributes['runloom.run.status'], 'succeeded');
    assert.equal(chatSpan.attributes['gen_ai.request.model'], openai.model);
    assert.equal(chatSpan.attributes['gen_ai.provider.name'], 'openai');
    assert.equal(chatSpan.attributes['gen_ai.usage.input_tokens'], 30);
    assert.equal(chatSpan.attributes['gen_ai.usage.output_tokens'], 5);
  });

  it('disable: records no trace and emits no span', async () => {
    const run = await runSync(promptConfig(openai), { telemetry_strategy: 'disable' });
    assert.equal(run.telemetry_enabled, false);
    assert.equal(run.trace, null);
    assert.equal(exporter.getFinishedSpans().length, 0);
  });

  it("default: follows the runnable's telemetry setting, on when it has none", async () => {
    const off = await runSync(promptConfig(openai, undefined, { telemetry: false }));
    assert.equal(off.telemetry_enabled, false);
    assert.equal(off.trace, null);
    assert.equal(exporter.getFinishedSpans().length, 0);
    const on = await runSync(promptConfig(openai));
    assert.equal(on.telemetry_strategy, 'default');
    assert.equal(on.telemetry_enabled, true);
    assert.ok(on.trace.model_calls.length === 1);
    assert.ok(spansOf(on.id).length === 3);
  });

  it('traces every flow step and each step’s model call under it', async () => {
    const run = await runSync({
      type: 'flow',
      llms: [{ provider: 'openai', model: openai.model }],
      steps: [
        { id: 'draft', uses: { prompt: { messages: [{ role: 'user', content: 'draft' }] } } },
        { id: 'polish', uses: { prompt: { messages: [{ role: 'user', content: 'polish {{steps.draft.output}}' }] } } },
      ],
    });
    assert.deepEqual(
      run.trace.steps.map((step: Json) => [step.name, step.kind]),
      [
        ['run', 'run'],
        ['draft', 'flow_step'],
        ['polish', 'flow_step'],
      ],
    );
    assert.deepEqual(run.trace.model_calls.map((call: Json) => call.step), ['draft', 'polish']);
    const spans = spansOf(run.id);
    const polish = spans.find((span) => span.name === 'runloom.step polish')!;
    const chats = spans.filter((span) => span.name.startsWith('chat '));
    assert.equal(chats.length, 2);
    assert.ok(chats.some((chat) => chat.parentSpanContext?.spanId === polish.spanContext().spanId));
  });

  it('records a failed model call in the trace with its error', async () => {
    openai.reply({ type: 'error', status: 400, message: 'nope' });
    const runnable = await createRunnable(t, promptConfig(openai));
    const run = (await (await submit(t, runnable.id, { telemetry_strategy: 'force' }, { mode: 'sync' })).json()) as Json;
    assert.equal(run.status, 'failed');
    assert.equal(run.trace.model_calls[0].error.code, 'bad_request');
    assert.equal(run.trace.steps[0].status, 'failed');
    const runSpan = spansOf(run.id).find((span) => span.name === 'runloom.run')!;
    assert.equal(runSpan.status.code, 2);
  });
});
