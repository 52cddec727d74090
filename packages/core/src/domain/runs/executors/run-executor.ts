import { inject, injectable } from 'inversify';
import { HttpClient } from '../../../ports/http-client';
import { ModelGateway } from '../../../ports/model-gateway';
import { type KeptProviderConfig, ProviderService } from '../../providers/provider-service';
import { ResourceService } from '../../resources/resource-service';
import { RunnableService } from '../../runnables/runnable-service';
import type { RunRecord, RunUsage } from '../run-record';
import type { RunTelemetry } from '../run-telemetry';
import { ProviderGates } from '../provider-gates';
import { loadEmbeddedInputs } from './embedded-inputs';
import { executeRunnable } from './execute-runnable';
import { type ExecutionServices, RunExecution } from './execution';
import type { StepOutcome } from './execution-types';

/** Executes a run's configuration snapshot: its embedded resources in, its outputs out. */
@injectable()
export class RunExecutor {
  private readonly services: ExecutionServices;

  constructor(
    @inject(ModelGateway) gateway: ModelGateway,
    @inject(ProviderService) providers: ProviderService,
    @inject(RunnableService) runnables: RunnableService,
    @inject(HttpClient) http: HttpClient,
    @inject(ResourceService) private readonly resources: ResourceService,
    @inject(ProviderGates) gates: ProviderGates,
  ) {
    this.services = { gateway, providers, runnables, http, gates };
  }

  /**
   * Runs until the outputs are there or `signal` aborts; tokens used are added to `usage` either
   * way. `provider`: a configuration the run's acceptance checked, for its first model call.
   */
  async execute(run: RunRecord, signal: AbortSignal, telemetry: RunTelemetry, usage: RunUsage, provider?: KeptProviderConfig): Promise<StepOutcome> {
    const inputs = await loadEmbeddedInputs(this.resources, run, signal);
    const execution = RunExecution.start(this.services, run.account_id, signal, telemetry, usage, provider);
    const { config_content_type: type, config_content_parsed: config } = run.runnable_snapshot;
    return executeRunnable(execution, type, config, inputs);
  }
}
