import { inject, injectable } from 'inversify';
import { EventBus } from '../../ports/event-bus';
import { ModelGateway } from '../../ports/model-gateway';
import { CommandExecutionService } from '../commands/command-execution-service';
import { ProviderService } from '../providers/provider-service';
import { runTopic } from '../runs/run-engine';
import { RunFailure } from '../runs/run-failure';
import { isFinished, type RunView } from '../runs/run-record';
import { RunService } from '../runs/run-service';
import { WorkspaceConfigService } from '../workspaces/workspace-config-service';
import type { ProcessRunRecord, StoredTask } from './process-run-record';
import type { ModelChoiceInput, TaskSpec, TaskType } from './process-spec';

/** What an attempt of a task is given: its run, its spec, and a way to remember a started child run. */
export interface TaskAttempt {
  run: ProcessRunRecord;
  task: StoredTask;
  spec: TaskSpec;
  signal: AbortSignal;
  /** Stores the id of the run or command execution the attempt started, so a resumed attempt follows it instead. */
  rememberChild(id: string): Promise<void>;
}

/** The output of a finished attempt, and lines of it for the run's log. */
export interface TaskOutcome {
  output: unknown;
  lines: string[];
}

/**
 * Executes one attempt of a `prompt`, `runnable` or `command` task (`approval` and `wait` are the
 * engine's own: they are states and timers, not work). Throws what the task fails with; the
 * engine turns it into the task's `error` with `describeFailure`.
 */
@injectable()
export class ProcessTaskExecutor {
  constructor(
    @inject(ModelGateway) private readonly gateway: ModelGateway,
    @inject(ProviderService) private readonly providers: ProviderService,
    @inject(WorkspaceConfigService) private readonly workspaceConfigs: WorkspaceConfigService,
    @inject(RunService) private readonly runs: RunService,
    @inject(CommandExecutionService) private readonly commands: CommandExecutionService,
    @inject(EventBus) private readonly events: EventBus,
  ) {}

  execute(attempt: TaskAttempt): Promise<TaskOutcome> {
    const type: TaskType = attempt.spec.type;
    switch (type) {
      case 'prompt':
        return this.prompt(attempt as TaskAttempt & { spec: TaskSpec<'prompt'> });
      case 'runnable':
        return this.runnable(attempt as TaskAttempt & { spec: TaskSpec<'runnable'> });
      case 'command':
        return this.command(attempt as TaskAttempt & { spec: TaskSpec<'command'> });
      default:
        throw new Error(`${type} tasks are not executed as work`);
    }
  }

  /** One model call: the prompt as the user message, the run's instructions as the system text. */
  private async prompt({ run, spec, signal }: TaskAttempt & { spec: TaskSpec<'prompt'> }): Promise<TaskOutcome> {
    const model = await this.modelOf(run, spec);
    const settings = await this.providers.getCallSettings(run.account_id, model.provider);
    const response = await this.gateway.generate({
      provider: model.provider,
      model: model.model,
      credentials: settings.credentials,
      ...(run.instructions ? { system: run.instructions } : {}),
      messages: [{ role: 'user', content: spec.input.prompt }],
      signal,
    });
    return { output: response.text, lines: response.text.split('\n') };
  }

  /**
   * First found wins: the run request's model, the task's own, the workspace configuration's
   * `models.default` (docs/api.md#process-runs); else the task fails saying what to set.
   */
  private async modelOf(run: ProcessRunRecord, spec: TaskSpec): Promise<ModelChoiceInput> {
    const configured = run.model ?? spec.model ?? (await this.workspaceConfigs.get(run.account_id, run.workspace_id)).models?.default;
    if (configured) return configured;
    throw new RunFailure(
      'no_model',
      `prompt task '${spec.id}' has no model: set model {provider, model} in the run request or on the task, or models.default in the workspace configuration`,
    );
  }

  /**
   * Executes the workspace command (or follows the execution an interrupted attempt started) and
   * answers its output text. The model given to a prompt command: the run request's, else the task's.
   */
  private async command({ run, task, spec, signal, rememberChild }: TaskAttempt & { spec: TaskSpec<'command'> }): Promise<TaskOutcome> {
    const { trigger, args } = spec.input;
    let executionId = task.state.child_id;
    if (executionId === null) {
      const model = run.model ?? spec.model;
      executionId = (await this.commands.execute(run.account_id, run.workspace_id, trigger, { args, ...(model ? { model } : {}) })).runId;
      await rememberChild(executionId);
    }
    const id = executionId;
    const ended = await this.untilEnd(signal, () => this.commands.cancel(run.account_id, run.workspace_id, trigger, id), () => this.commands.waitForEnd(id, signal));
    if (ended === undefined) throw signal.reason;
    if (ended.status !== 'succeeded') {
      throw new RunFailure(ended.error?.code ?? ended.status, `command '${trigger}' (execution ${id}) ended ${ended.status}${ended.error ? `: ${ended.error.message}` : ''}`);
    }
    return { output: ended.output, lines: ended.output.split('\n') };
  }

  /** Submits a run of the runnable (or follows the one an interrupted attempt submitted) and answers its outputs. */
  private async runnable({ run, task, spec, signal, rememberChild }: TaskAttempt & { spec: TaskSpec<'runnable'> }): Promise<TaskOutcome> {
    let runId = task.state.child_id;
    if (runId === null) {
      const submitted = await this.runs.submit(run.account_id, spec.input.runnable_id, { resources: spec.input.resources } as Parameters<RunService['submit']>[2]);
      if (submitted.mode !== 'async') throw new Error('an async submission answered a finished run');
      runId = submitted.id;
      await rememberChild(runId);
    }
    const id = runId;
    const finished = await this.untilEnd(signal, () => this.runs.cancel(run.account_id, id), () => this.finished(run.account_id, id, signal));
    if (finished.status !== 'succeeded') {
      throw new RunFailure(finished.error?.code ?? finished.status, `run ${id} of runnable ${spec.input.runnable_id} ended ${finished.status}${finished.error ? `: ${finished.error.message}` : ''}`);
    }
    const lines = finished.outputs.flatMap((output) => ('text_value' in output && typeof output.text_value === 'string' ? output.text_value.split('\n') : []));
    return { output: finished.outputs, lines };
  }

  /** Waits for the end of what a task started; an abort (cancel, timeout) cancels it too. */
  private async untilEnd<T>(signal: AbortSignal, cancel: () => Promise<unknown>, ended: () => Promise<T>): Promise<T> {
    const onAbort = (): void => {
      cancel().catch(() => {
        // Already finished: nothing to stop.
      });
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await ended();
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** The run once finished: its final event, or the store when it had already finished. */
  private finished(accountId: string, runId: string, signal: AbortSignal): Promise<RunView> {
    return new Promise<RunView>((resolve, reject) => {
      const stop = (): void => {
        subscription.unsubscribe();
        signal.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        stop();
        reject(signal.reason);
      };
      // Listening before reading, so an end between the two cannot slip by.
      const subscription = this.events.subscribe<RunView>(runTopic(runId), (event) => {
        if (!isFinished(event.data.status)) return;
        stop();
        resolve(event.data);
      });
      signal.addEventListener('abort', onAbort, { once: true });
      this.runs.get(accountId, runId).then((view) => {
        if (!isFinished(view.status)) return;
        stop();
        resolve(view);
      }, (error: unknown) => {
        stop();
        reject(error);
      });
    });
  }
}
