import type { HttpClient, HttpRequest, HttpResponse } from '../../../ports/http-client';
import { ModelCallError, type ModelGateway, type ModelResponse } from '../../../ports/model-gateway';
import type { KeptProviderConfig, ProviderService } from '../../providers/provider-service';
import type { RunnableService } from '../../runnables/runnable-service';
import { RunFailure } from '../run-failure';
import { executeRunnable } from './execute-runnable';
import type { RunUsage } from '../run-record';
import type { RunTelemetry } from '../run-telemetry';
import type { ProviderGates, ProviderLimits } from '../provider-gates';
import type { Execution, ModelChoice, ModelPrompt, StepOutcome } from './execution-types';
import type { Scope } from './templates';

export interface ExecutionServices {
  gateway: ModelGateway;
  providers: ProviderService;
  runnables: RunnableService;
  /** Outbound requests under the server's egress policy. */
  http: HttpClient;
  /** Who may call which vendor now: the account's provider limits and the vendors' back-offs. */
  gates: ProviderGates;
}

/** Attempts of one model call: the first and two retries of a 429 or a 5xx (what the AI SDK does by default). */
export const MAX_MODEL_CALL_ATTEMPTS = 3;
/** Wait before retrying when the vendor says nothing; doubles each time (the AI SDK's own schedule). */
const RETRY_INITIAL_DELAY_MS = 2000;

/** Runnables calling runnables (flows, agent tools) stop at this depth: a cycle would never end. */
export const MAX_NESTING_DEPTH = 8;

/** The `Execution` of one run: nested runnables run through the executors, one level deeper. */
export class RunExecution implements Execution {
  private constructor(
    private readonly services: ExecutionServices,
    readonly accountId: string,
    readonly signal: AbortSignal,
    readonly telemetry: RunTelemetry,
    /** Shared by every nested execution of the run. */
    readonly usage: RunUsage,
    private readonly depth: number,
    /**
     * Shared by every nested execution of the run: the provider configuration its acceptance
     * checked, until the run's first model call takes it (later calls read the store: the
     * acceptance says nothing of how long after it they come).
     */
    private readonly accepted: { provider?: KeptProviderConfig },
  ) {}

  /** The execution of a run; model calls add their tokens to `usage`. `provider`: see `RunExecutor.execute`. */
  static start(services: ExecutionServices, accountId: string, signal: AbortSignal, telemetry: RunTelemetry, usage: RunUsage, provider?: KeptProviderConfig): RunExecution {
    return new RunExecution(services, accountId, signal, telemetry, usage, 0, { provider });
  }

  /** The same execution with steps and calls nested under `telemetry`. */
  within(telemetry: RunTelemetry): RunExecution {
    return new RunExecution(this.services, this.accountId, this.signal, telemetry, this.usage, this.depth, this.accepted);
  }

  /** The same execution under another signal (a flow stops its other steps when one fails). */
  withSignal(signal: AbortSignal): RunExecution {
    return new RunExecution(this.services, this.accountId, signal, this.telemetry, this.usage, this.depth, this.accepted);
  }

  /**
   * One model call by step `step`: the provider's credentials are opened now and used only for
   * it. The call waits for the account's limits on the provider; a 429 backs the provider off for
   * the whole account (as long as the vendor's `retry-after` says) and the call waits its turn
   * again, a 5xx is retried after a delay; neither wait holds a vendor slot.
   */
  callModel(step: string, choice: ModelChoice, prompt: ModelPrompt): Promise<ModelResponse> {
    this.signal.throwIfAborted();
    return this.telemetry.modelCall(step, choice.provider, choice.model, async () => {
      const { gates } = this.services;
      const accepted = this.accepted.provider;
      this.accepted.provider = undefined;
      const settings = await this.services.providers.getCallSettings(this.accountId, choice.provider, accepted);
      const limits: ProviderLimits = { maxConcurrency: settings.limits.max_concurrency, requestsPerMinute: settings.limits.requests_per_minute };
      for (let attempt = 1; ; attempt++) {
        const permit = await gates.acquire(this.accountId, choice.provider, limits, this.signal);
        let retryInMs: number | undefined;
        try {
          const response = await this.services.gateway.generate({
            ...prompt,
            provider: choice.provider,
            model: choice.model,
            credentials: settings.credentials,
            params: choice.params,
            signal: this.signal,
            maxRetries: 0,
          });
          this.usage.input_tokens += response.usage.input_tokens;
          this.usage.output_tokens += response.usage.output_tokens;
          return response;
        } catch (error) {
          retryInMs = attempt < MAX_MODEL_CALL_ATTEMPTS && !this.signal.aborted ? retryDelayMs(error, attempt) : undefined;
          if (retryInMs === undefined) throw error;
          if ((error as ModelCallError).code === 'rate_limited') {
            gates.backOff(this.accountId, choice.provider, retryInMs);
            retryInMs = 0;
          }
        } finally {
          permit.release();
        }
        if (retryInMs > 0) await gates.delay(retryInMs, this.signal);
      }
    });
  }

  /** Runs runnable `runnableId` of the account in-process with `inputs` as its placeholders. */
  async runRunnable(runnableId: string, inputs: Scope): Promise<StepOutcome> {
    if (this.depth >= MAX_NESTING_DEPTH) {
      throw new RunFailure('nesting_too_deep', `runnables call runnables more than ${MAX_NESTING_DEPTH} levels deep; a flow or agent probably calls itself`);
    }
    const runnable = await this.services.runnables.find(this.accountId, runnableId);
    if (!runnable) throw new RunFailure('runnable_not_found', `runnable ${runnableId} does not exist in this account`);
    this.signal.throwIfAborted();
    const nested = new RunExecution(this.services, this.accountId, this.signal, this.telemetry, this.usage, this.depth + 1, this.accepted);
    return executeRunnable(nested, runnable.config_content_type, runnable.config_content_parsed, inputs);
  }

  /** The configuration of runnable `runnableId` of the account (agent tools describe it to the model). */
  findRunnable(runnableId: string): ReturnType<RunnableService['find']> {
    return this.services.runnables.find(this.accountId, runnableId);
  }

  /** An outbound request under the server's egress policy (the same one callbacks obey). */
  http(request: Omit<HttpRequest, 'signal' | 'egress'>): Promise<HttpResponse> {
    return this.services.http.request({ ...request, signal: this.signal });
  }
}

/** How long to wait before retrying a failed call; undefined when retrying would not help. */
function retryDelayMs(error: unknown, attempt: number): number | undefined {
  if (!(error instanceof ModelCallError)) return undefined;
  const retryable = error.code === 'rate_limited' || (error.code === 'vendor_error' && error.status !== undefined && error.status >= 500);
  if (!retryable) return undefined;
  return error.retryAfterMs ?? RETRY_INITIAL_DELAY_MS * 2 ** (attempt - 1);
}
