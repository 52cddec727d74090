import {
  type FlowConfig,
  type FlowStep,
  isPromptUse,
  isTransformUse,
  stepDependencies,
  type TransformUse,
} from '../../runnables/config-schema';
import { describeFailure, RunFailure } from '../run-failure';
import type { Execution, StepOutcome } from './execution-types';
import { executePrompt, outputOf, textOutcome } from './prompt-executor';
import { renderDeep, renderText, renderValue, resolveReference, type Scope } from './templates';

/** A step's own failure, kept apart from the aborts it causes in the steps still running. */
class StepFailed extends Error {
  constructor(
    readonly stepId: string,
    readonly failure: unknown,
  ) {
    super(`step '${stepId}' failed`);
  }
}

/**
 * Runs a flow as a DAG: each step starts as soon as the steps it needs (`needs` plus every
 * `{{steps.ID.output}}` it references) have succeeded, so independent steps run concurrently. The
 * first step to fail stops the others and fails the flow with its id in the error. The flow's
 * outputs are those of its `output` step (default: the last one).
 */
export async function executeFlow(execution: Execution, flow: FlowConfig, scope: Scope): Promise<StepOutcome> {
  const stopOthers = new AbortController();
  const flowExecution = execution.withSignal(AbortSignal.any([execution.signal, stopOthers.signal]));
  const byId = new Map(flow.steps.map((step) => [step.id, step]));
  const outcomes = new Map<string, StepOutcome>();
  const started = new Map<string, Promise<StepOutcome>>();
  let firstFailure: StepFailed | undefined;

  const start = (step: FlowStep): Promise<StepOutcome> => {
    let promise = started.get(step.id);
    if (promise) return promise;
    promise = (async () => {
      await Promise.all(stepDependencies(step).map((id) => start(byId.get(id)!)));
      const stepScope = { ...scope, steps: Object.fromEntries([...outcomes].map(([id, outcome]) => [id, { output: outcome.value }])) };
      try {
        const outcome = await flowExecution.telemetry.step(step.id, 'flow_step', (telemetry) => runStep(flowExecution.within(telemetry), flow, step, stepScope));
        outcomes.set(step.id, outcome);
        return outcome;
      } catch (error) {
        const failure = new StepFailed(step.id, error);
        firstFailure ??= failure;
        stopOthers.abort(failure);
        throw failure;
      }
    })();
    started.set(step.id, promise);
    return promise;
  };

  const settled = await Promise.allSettled(flow.steps.map(start));
  if (firstFailure) {
    // A cancel or timeout of the run is the run's outcome, not this step's.
    execution.signal.throwIfAborted();
    const { code, message } = describeFailure(firstFailure.failure);
    throw new RunFailure(code, `step '${firstFailure.stepId}' failed: ${message}`);
  }
  const rejected = settled.find((result) => result.status === 'rejected');
  if (rejected) throw rejected.reason;
  const outputStep = flow.output ?? flow.steps[flow.steps.length - 1]!.id;
  return outcomes.get(outputStep)!;
}

function runStep(execution: Execution, flow: FlowConfig, step: FlowStep, scope: Scope): Promise<StepOutcome> {
  const uses = step.uses;
  const inputs = (renderDeep(step.with ?? {}, scope) ?? {}) as Record<string, unknown>;
  if (typeof uses === 'string') return execution.runRunnable(uses, inputs);
  if (isPromptUse(uses)) {
    return executePrompt(execution, { prompt: uses.prompt, llms: uses.llms ?? flow.llms, schemas: uses.schemas as Record<string, unknown> | undefined }, { ...scope, ...inputs }, step.id);
  }
  if (isTransformUse(uses)) return Promise.resolve(runTransform(uses, { ...scope, ...inputs }, step.id));
  return execution.runRunnable(uses.runnable, inputs);
}

function runTransform(transform: TransformUse, scope: Scope, stepId: string): StepOutcome {
  switch (transform.transform) {
    case 'template':
      return textOutcome(renderText(transform.template, scope));
    case 'json_parse': {
      const value = parseJson(renderText(transform.input, scope), stepId);
      return { outputs: [outputOf('output', value)], value };
    }
    case 'pick': {
      const input = renderValue(transform.input, scope);
      const source = typeof input === 'string' ? parseJson(input, stepId) : input;
      const value = resolveReference({ value: source }, `value.${transform.path}`);
      if (value === undefined) throw new RunFailure('transform_failed', `pick: the input has nothing at path '${transform.path}'`);
      return { outputs: [outputOf('output', value)], value };
    }
  }
}

function parseJson(text: string, stepId: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new RunFailure('transform_failed', `step '${stepId}': the input is not JSON (${(error as Error).message})`);
  }
}
