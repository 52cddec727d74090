import type { HttpRequest, HttpResponse } from '../../../ports/http-client';
import type { ModelRequest, ModelResponse } from '../../../ports/model-gateway';
import type { ProviderName } from '../../../ports/provider-names';
import type { RunnableService } from '../../runnables/runnable-service';
import type { RunOutput, RunUsage } from '../run-record';
import type { RunTelemetry } from '../run-telemetry';
import type { Scope } from './templates';

/**
 * What the executors (prompt, flow, agent) see of the run they execute. Its own file, apart from
 * the implementation (`RunExecution`, which runs nested runnables through the executors), so the
 * executors and the execution do not import each other.
 */

/** What a runnable, a flow step or a tool produced: its outputs, and the value later steps see. */
export interface StepOutcome {
  outputs: RunOutput[];
  /** The first output's text or object: what `{{steps.ID.output}}` and tool results read. */
  value: unknown;
}

/** The model a prompt or an agent calls, as configured (`llms[]` or an agent's `model`). */
export interface ModelChoice {
  provider: ProviderName;
  model: string;
  params?: Record<string, unknown>;
}

/** A model request without what the execution supplies (model, credentials, signal). */
export type ModelPrompt = Omit<ModelRequest, 'provider' | 'model' | 'credentials' | 'params' | 'signal'>;

/**
 * Everything executors need while one run executes: model calls (credentials opened at call time,
 * usage summed, traced), nested runnables of the same account, and outbound HTTP under the egress
 * policy. Every operation honours the run's abort signal (cancel, timeout, shutdown).
 */
export interface Execution {
  readonly accountId: string;
  readonly signal: AbortSignal;
  readonly telemetry: RunTelemetry;
  /** Shared by every nested execution of the run. */
  readonly usage: RunUsage;
  /** The same execution with steps and calls nested under `telemetry`. */
  within(telemetry: RunTelemetry): Execution;
  /** The same execution under another signal (a flow stops its other steps when one fails). */
  withSignal(signal: AbortSignal): Execution;
  /** One model call by step `step`: the provider's credentials are opened now and used only for it. */
  callModel(step: string, choice: ModelChoice, prompt: ModelPrompt): Promise<ModelResponse>;
  /** Runs runnable `runnableId` of the account in-process with `inputs` as its placeholders. */
  runRunnable(runnableId: string, inputs: Scope): Promise<StepOutcome>;
  /** The configuration of runnable `runnableId` of the account (agent tools describe it to the model). */
  findRunnable(runnableId: string): ReturnType<RunnableService['find']>;
  /** An outbound request under the server's egress policy (the same one callbacks obey). */
  http(request: Omit<HttpRequest, 'signal' | 'egress'>): Promise<HttpResponse>;
}
