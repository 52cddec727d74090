import { inject, injectable } from 'inversify';
import { RunloomConfig } from '../../config';
import { Clock } from '../../ports/clock';
import { EventBus } from '../../ports/event-bus';
import { ModelGateway } from '../../ports/model-gateway';
import { ProcessLaunchError, ProcessLauncher } from '../../ports/process-launcher';
import { DomainError } from '../errors';
import type { ProcessRunService } from '../processes/process-run-service';
import type { ProcessRunView } from '../processes/process-run-record';
import { ProviderService } from '../providers/provider-service';
import { ProviderGates, type ProviderPermit } from '../runs/provider-gates';
import { TEMPLATE_REFERENCE } from '../runnables/template-syntax';
import { runTopic } from '../runs/run-engine';
import { isFinished as isRunFinished, type RunOutput, type RunView } from '../runs/run-record';
import { RunService } from '../runs/run-service';
import { WorkspaceEvents } from '../workspace-events/workspace-events';
import { WorkspaceService } from '../workspaces/workspace-service';
import { DEFAULT_TIMEOUT_SECONDS } from './command-schemas';
import type { ExecutionFailure, ExecutionRecord } from './execution-record';
import type { LiveOutput } from './live-output';

/**
 * The process runs service, resolved when first needed: process runs execute commands (command
 * tasks) and commands start process runs, so neither can take the other in its constructor.
 */
export const ProcessRuns = Symbol.for('runloom.commands.ProcessRuns');
export type ProcessRuns = () => ProcessRunService;

/** Process run statuses an execution following the run ends on (a failed run may be retried later; the execution has ended). */
const PROCESS_RUN_ENDS: readonly string[] = ['succeeded', 'failed', 'cancelled'];

/** How an execution ended, as its runner saw it. */
export interface RunnerOutcome {
  status: 'succeeded' | 'failed' | 'cancelled';
  exitCode?: number | null;
  error?: ExecutionFailure | null;
}

/** What a runner works with: the execution, where its output goes, and its cancel/stop signal. */
export interface RunnerContext {
  execution: ExecutionRecord;
  output: LiveOutput;
  signal: AbortSignal;
  /** Stores the run a runnable command started, before waiting on it, so a resumed execution follows it. */
  linkRun(runId: string): Promise<void>;
}

/** Shell commands are refused unless the host turned them on; the message says how. */
export function shellCommandsDisabled(): DomainError {
  return DomainError.forbidden(
    'shell commands are disabled on this server; the operator enables them with --enable-shell-commands (RUNLOOM_ENABLE_SHELL_COMMANDS=true, or createRunloom({ shellCommands: true }))',
  );
}

/**
 * Executes one command by type (docs/api.md#commands): `shell` through the `ProcessLauncher`,
 * `prompt` through the `ModelGateway` (streamed, so the output is readable as it arrives),
 * `runnable` as a run of the `RunService`, `process` as a process run. A runner resolves with the outcome; it throws only when `signal` aborted for a reason
 * other than the execution's (the queue is stopping).
 */
@injectable()
export class CommandRunners {
  constructor(
    @inject(ProcessLauncher) private readonly launcher: ProcessLauncher,
    @inject(WorkspaceService) private readonly workspaces: WorkspaceService,
    @inject(ModelGateway) private readonly gateway: ModelGateway,
    @inject(ProviderService) private readonly providers: ProviderService,
    @inject(ProviderGates) private readonly gates: ProviderGates,
    @inject(RunService) private readonly runs: RunService,
    @inject(EventBus) private readonly bus: EventBus,
    @inject(WorkspaceEvents) private readonly workspaceEvents: WorkspaceEvents,
    @inject(ProcessRuns) private readonly processRuns: ProcessRuns,
    @inject(Clock) private readonly clock: Clock,
    @inject(RunloomConfig) private readonly config: RunloomConfig,
  ) {}

  run(context: RunnerContext): Promise<RunnerOutcome> {
    switch (context.execution.type) {
      case 'shell':
        return this.shell(context);
      case 'prompt':
        return this.prompt(context);
      case 'runnable':
        return this.runnable(context);
      case 'process':
        return this.process(context);
    }
  }

  /**
   * Runs `argv` followed by the args, each one argv element (never a shell, never interpolated
   * into a string), in the workspace folder; stopped with its whole process group on cancel or
   * past `timeout_seconds`.
   */
  private async shell({ execution, output, signal }: RunnerContext): Promise<RunnerOutcome> {
    // Checked again here: a queued execution of a server restarted without the flag must not run.
    if (!this.config.shellCommands) return failed('shell_disabled', shellCommandsDisabled().message);
    const files = await this.workspaces.files(execution.account_id, execution.workspace_id);
    if (files.localRoot === undefined) return failed('no_local_folder', "this workspace's files are not in a folder on this machine, so a shell command cannot run in it");
    let launched;
    try {
      launched = await this.launcher.launch({ argv: [...execution.command.argv!, ...execution.args], cwd: files.localRoot });
    } catch (error) {
      if (error instanceof ProcessLaunchError) return failed('launch_failed', error.message);
      throw error;
    }
    const seconds = execution.command.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS;
    let timedOut = false;
    const timer = this.clock.setTimeout(() => {
      timedOut = true;
      launched.kill();
    }, seconds * 1000);
    const onAbort = (): void => launched.kill();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const chunk of launched.output) output.writeBytes(chunk);
      const exit = await launched.exited;
      if (signal.aborted) return this.aborted(signal);
      if (timedOut) return { ...failed('timeout', `stopped after ${seconds} s (the command's timeout_seconds)`), exitCode: exit.exitCode };
      if (exit.exitCode === 0) return { status: 'succeeded', exitCode: 0, error: null };
      const how = exit.exitCode === null ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode}`;
      return { ...failed('exit_code', `the command ${how}`), exitCode: exit.exitCode };
    } finally {
      timer.cancel();
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Renders the template with the args and streams the model's answer into the output. */
  private async prompt({ execution, output, signal }: RunnerContext): Promise<RunnerOutcome> {
    const model = execution.model!;
    const values = namedArgs(execution);
    const prompt = execution.command.template!.replace(TEMPLATE_REFERENCE, (_match, name: string) => values[name] ?? '');
    let settings: Awaited<ReturnType<ProviderService['getCallSettings']>>;
    try {
      settings = await this.providers.getCallSettings(execution.account_id, model.provider);
    } catch (error) {
      if (error instanceof DomainError) return failed('provider_unavailable', error.message);
      throw error;
    }
    // The account's limits on the provider hold for commands as for runs (ARCHITECTURE.md, "Run scheduling").
    const limits = { maxConcurrency: settings.limits.max_concurrency, requestsPerMinute: settings.limits.requests_per_minute };
    let permit: ProviderPermit;
    try {
      permit = await this.gates.acquire(execution.account_id, model.provider, limits, signal);
    } catch (error) {
      if (signal.aborted) return this.aborted(signal);
      throw error;
    }
    try {
      const request = { provider: model.provider, model: model.model, credentials: settings.credentials, messages: [{ role: 'user' as const, content: prompt }], signal };
      for await (const event of this.gateway.stream(request)) {
        if (event.type === 'text-delta') output.writeText(event.text);
        else if (event.type === 'error') {
          if (signal.aborted) return this.aborted(signal);
          if (event.error.code === 'rate_limited') this.gates.backOff(execution.account_id, model.provider, event.error.retryAfterMs ?? 2000);
          return failed(event.error.code, event.error.message);
        }
      }
    } finally {
      permit.release();
    }
    return { status: 'succeeded', error: null };
  }

  /**
   * Starts a run of the runnable (the args fill its inputs by name, as resource ids) and follows
   * it to its end; a resumed execution follows the run it already started. Cancelling the
   * execution cancels the run.
   */
  private async runnable({ execution, output, signal, linkRun }: RunnerContext): Promise<RunnerOutcome> {
    let runId = execution.run_id;
    if (runId === null) {
      const values = namedArgs(execution);
      const resources = Object.entries(values).map(([name, resource]) => ({ name, resource }));
      try {
        const submitted = await this.runs.submit(execution.account_id, execution.command.runnable_id!, { resources });
        runId = submitted.mode === 'async' ? submitted.id : submitted.run.id;
      } catch (error) {
        if (error instanceof DomainError) return failed('run_refused', error.message);
        throw error;
      }
      try {
        await linkRun(runId);
      } catch (error) {
        // Cancelled before the run could be recorded: nothing else would stop the run.
        await this.runs.cancel(execution.account_id, runId).catch(() => undefined);
        throw error;
      }
    }
    const run = await this.finishedRun(execution.account_id, runId, signal);
    if (!run) {
      if (signal.reason instanceof ExecutionCancelled) await this.runs.cancel(execution.account_id, runId).catch(() => undefined);
      return this.aborted(signal);
    }
    output.writeText(outputText(run.outputs));
    if (run.status === 'succeeded') return { status: 'succeeded', error: null };
    if (run.status === 'cancelled') return { status: 'cancelled', error: { code: 'cancelled', message: `run ${runId} was cancelled` } };
    return failed(run.error?.code ?? run.status, `run ${runId} ${run.status}: ${run.error?.message ?? 'no error given'}`);
  }

  /**
   * Creates a run of the process with the spec of its latest run in the workspace (a process is a
   * named spec; its runs carry it) and the args as its inputs, starts it and follows it to its end;
   * a resumed execution follows the run it already created. Cancelling the execution cancels the run.
   */
  private async process({ execution, output, signal, linkRun }: RunnerContext): Promise<RunnerOutcome> {
    const { account_id: accountId, workspace_id: workspaceId } = execution;
    const processId = execution.command.process_id!;
    const runs = this.processRuns();
    let runId = execution.run_id;
    if (runId === null) {
      const latest = await latestProcessRun(runs, accountId, workspaceId, processId);
      if (!latest) return failed('no_process_spec', noProcessSpec(workspaceId, processId).message);
      try {
        runId = (await runs.create(accountId, workspaceId, processId, { spec: latest.spec, inputs: namedArgs(execution) })).id;
        await linkRun(runId);
        await runs.act(accountId, workspaceId, runId, 'start');
      } catch (error) {
        if (runId !== null) await runs.act(accountId, workspaceId, runId, 'cancel').catch(() => undefined);
        if (error instanceof DomainError) return failed('process_refused', error.message);
        throw error;
      }
    }
    const id = runId;
    const run = await new Promise<ProcessRunView | undefined>((resolve, reject) => {
      const done = (view: ProcessRunView | undefined): void => {
        subscription.unsubscribe();
        signal.removeEventListener('abort', onAbort);
        resolve(view);
      };
      const onAbort = (): void => done(undefined);
      // Listening before reading, so the end cannot slip between the two.
      const subscription = this.workspaceEvents.subscribe(workspaceId, ({ event }) => {
        if (event.type === 'process.run.updated' && event.run_id === id && PROCESS_RUN_ENDS.includes(event.status as string)) done(event.run as ProcessRunView);
      });
      if (signal.aborted) return done(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      runs.get(accountId, workspaceId, id).then((view) => {
        if (PROCESS_RUN_ENDS.includes(view.status)) done(view);
      }, reject);
    });
    if (!run) {
      if (signal.reason instanceof ExecutionCancelled) await runs.act(accountId, workspaceId, id, 'cancel').catch(() => undefined);
      return this.aborted(signal);
    }
    output.writeText(JSON.stringify(run.phases, null, 2));
    if (run.status === 'succeeded') return { status: 'succeeded', error: null };
    if (run.status === 'cancelled') return { status: 'cancelled', error: { code: 'cancelled', message: `process run ${id} was cancelled` } };
    return failed('process_failed', `process run ${id} failed; retry or skip its failed task (POST /workspace/${workspaceId}/processes/runs/${id}/tasks/…)`);
  }

  /** The run once finished; undefined when `signal` aborts first. */
  private finishedRun(accountId: string, runId: string, signal: AbortSignal): Promise<RunView | undefined> {
    return new Promise<RunView | undefined>((resolve, reject) => {
      const done = (run: RunView | undefined): void => {
        subscription.unsubscribe();
        signal.removeEventListener('abort', onAbort);
        resolve(run);
      };
      const onAbort = (): void => done(undefined);
      // Listening before reading, so the end cannot slip between the two.
      const subscription = this.bus.subscribe<RunView>(runTopic(runId), (event) => {
        if (isRunFinished(event.data.status)) done(event.data);
      });
      if (signal.aborted) return done(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      this.runs.get(accountId, runId).then((run) => {
        if (isRunFinished(run.status)) done(run);
      }, reject);
    });
  }

  /** A cancelled execution ends `cancelled`; any other abort (the queue stopping) is rethrown. */
  private aborted(signal: AbortSignal): RunnerOutcome {
    if (signal.reason instanceof ExecutionCancelled) return { status: 'cancelled', error: signal.reason.failure };
    throw signal.reason;
  }
}

/** The abort reason of a cancelled execution. */
export class ExecutionCancelled extends Error {
  readonly failure: ExecutionFailure = { code: 'cancelled', message: 'the execution was cancelled' };
  constructor() {
    super('the execution was cancelled');
    this.name = 'ExecutionCancelled';
  }
}

/** The process's latest run in the workspace: the spec a process command runs. */
export async function latestProcessRun(runs: ProcessRunService, accountId: string, workspaceId: string, processId: string): Promise<ProcessRunView | undefined> {
  return (await runs.list(accountId, workspaceId, processId, { limit: 1, offset: 0 }))[0];
}

/** A process command needs a process that has run in the workspace; the message says how to make one. */
export function noProcessSpec(workspaceId: string, processId: string): DomainError {
  return DomainError.invalid(
    `process '${processId}' has no run in this workspace to take its spec from; create one with POST /workspace/${workspaceId}/processes/${processId}/runs`,
    [{ path: 'process_id', message: 'no run of this process in the workspace' }],
  );
}

function failed(code: string, message: string): RunnerOutcome {
  return { status: 'failed', error: { code, message } };
}

/** The args by declared name: given positionally, else the declared default. */
export function namedArgs(execution: Pick<ExecutionRecord, 'command' | 'args'>): Record<string, string> {
  const values: Record<string, string> = {};
  execution.command.args.forEach((declared, index) => {
    const value = execution.args[index] ?? declared.default;
    if (value !== undefined) values[declared.name] = value;
  });
  return values;
}

/** A run's outputs as text: a lone text output as it is, anything else as JSON. */
function outputText(outputs: readonly RunOutput[]): string {
  const only = outputs.length === 1 ? outputs[0]! : undefined;
  if (only?.text_value !== undefined) return only.text_value;
  return JSON.stringify(outputs, null, 2);
}
