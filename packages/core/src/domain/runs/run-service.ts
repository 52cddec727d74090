import { inject, injectable } from 'inversify';
import { DomainError } from '../errors';
import { validationError } from '../errors';
import { Clock } from '../../ports/clock';
import { WriteConflictError } from '../../ports/database';
import { EventBus } from '../../ports/event-bus';
import { IdGenerator } from '../../ports/id-generator';
import { SecretBox } from '../../ports/secret-box';
import { PROVIDERS_COLLECTION, ProviderService } from '../providers/provider-service';
import { ResourceService } from '../resources/resource-service';
import { defaultLlm, type InputConfig } from '../runnables/config-schema';
import { RUNNABLES_COLLECTION } from '../runnables/runnable-repositories';
import { type RunnableForWrite, RunnableService } from '../runnables/runnable-service';
import { CallbackDispatcher } from '../webhooks/callback-dispatcher';
import { checkEmbeddedResources } from './resource-checks';
import { RunEngine, runTopic } from './run-engine';
import { describeFailure, RunCancelled } from './run-failure';
import { isFinished, type RunRecord, toRunView, type RunView } from './run-record';
import { RunRepository } from './run-repository';
import { listRunsFilter, type ListRunsQuery, type ParsedRunRequest, RUN_MODES, type RunMode, runRequestSchema, type RunRequest } from './run-schemas';

/** What a submission answers: the id of an accepted async run, or the finished sync run. */
export type SubmittedRun = { mode: 'async'; id: string } | { mode: 'sync'; run: RunView };

/**
 * Submissions tried when a copy kept here (the runnable, the provider configuration) turns out to
 * have changed on another instance: once more for each, each read again.
 */
const SUBMIT_ATTEMPTS = 3;

/** A cancel retries this often when the run changes under it (queued → running) before a 409. */
const CANCEL_ATTEMPTS = 3;

/**
 * Runs of an account (docs/api.md#runs): submit (async or sync), read, list, cancel. Execution is the
 * `RunEngine`'s; this is the API over it.
 */
@injectable()
export class RunService {
  constructor(
    @inject(RunRepository) private readonly runs: RunRepository,
    @inject(RunEngine) private readonly engine: RunEngine,
    @inject(RunnableService) private readonly runnables: RunnableService,
    @inject(ResourceService) private readonly resources: ResourceService,
    @inject(ProviderService) private readonly providers: ProviderService,
    @inject(CallbackDispatcher) private readonly callbacks: CallbackDispatcher,
    @inject(SecretBox) private readonly secretBox: SecretBox,
    @inject(EventBus) private readonly events: EventBus,
    @inject(Clock) private readonly clock: Clock,
    @inject(IdGenerator) private readonly ids: IdGenerator,
  ) {}

  /**
   * Validates the request, checks its resources against the runnable's placeholders, snapshots the
   * runnable's configuration and queues the run. `async` (the default) answers its id at once;
   * `sync` waits until it has finished (or `signal` aborts: the caller went away) and answers it.
   */
  async submit(accountId: string, runnableId: string, body: RunRequest, mode: RunMode = 'async', signal?: AbortSignal): Promise<SubmittedRun> {
    const parsed = runRequestSchema.safeParse(body ?? {});
    if (!parsed.success) throw validationError(parsed.error);
    return this.submitParsed(accountId, runnableId, parsed.data, mode, signal);
  }

  /**
   * `submit` of a request `runRequestSchema` has parsed already (the route's validated body), so
   * that it is not parsed a second time per run.
   */
  async submitParsed(accountId: string, runnableId: string, request: ParsedRunRequest, mode: RunMode = 'async', signal?: AbortSignal): Promise<SubmittedRun> {
    // Checked again for callers without types (JavaScript hosts).
    if (!(RUN_MODES as readonly string[]).includes(mode)) {
      throw DomainError.invalid(`mode must be async or sync, not '${mode.slice(0, 50)}'`, [{ path: 'mode', message: 'must be async or sync' }]);
    }
    let freshRunnable = false;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.submitOn(accountId, await this.runnables.getForWrite(accountId, runnableId, freshRunnable), request, mode, signal);
      } catch (error) {
        // A copy kept here is out of date (written on another instance): read it again.
        if (!(error instanceof WriteConflictError) || attempt === SUBMIT_ATTEMPTS) throw error;
        if (error.collection === RUNNABLES_COLLECTION) freshRunnable = true;
        else if (error.collection === PROVIDERS_COLLECTION) this.providers.forgetKept(error.id);
        else throw error;
      }
    }
  }

  /** `submitParsed` of the runnable as read; accepted only while its `check` holds. */
  private async submitOn(
    accountId: string,
    { runnable, check }: RunnableForWrite,
    request: ParsedRunRequest,
    mode: RunMode,
    signal: AbortSignal | undefined,
  ): Promise<SubmittedRun> {
    const config = runnable.config_content_parsed;
    const resources = await checkEmbeddedResources(this.resources, accountId, (config.inputs ?? []) as InputConfig[], request.resources);
    if (request.callback_url !== null) await this.callbacks.validateCallbackUrl(request.callback_url);
    const withHeaders = request.callback_url !== null && Object.keys(request.callback_headers).length > 0;

    const telemetryEnabled = request.telemetry_strategy === 'force' || (request.telemetry_strategy === 'default' && config.telemetry !== false);
    const run: RunRecord = {
      id: this.ids.newId(),
      account_id: accountId,
      runnable_id: runnable.id,
      runnable_sha256: runnable.config_content_sha256,
      status: 'queued',
      created_at: this.clock.now().toISOString(),
      started_at: null,
      completed_at: null,
      timeout_seconds: request.timeout_seconds,
      telemetry_strategy: request.telemetry_strategy,
      telemetry_enabled: telemetryEnabled,
      resources,
      outputs: [],
      error: null,
      usage: { input_tokens: 0, output_tokens: 0 },
      callback: request.callback_url === null ? null : CallbackDispatcher.pending(request.callback_url),
      trace: null,
      runnable_snapshot: { name: runnable.name, config_content_type: runnable.config_content_type, config_content_parsed: config },
      resource_ids: [...new Set(resources.map((entry) => entry.resource.id))],
      sealed_callback_headers: withHeaders ? await this.secretBox.seal(JSON.stringify(request.callback_headers)) : null,
    };

    // A prompt makes one model call, on its default model's provider: when this instance keeps
    // that configuration, the run may use it if accepted at once (checked by the acceptance).
    const provider = runnable.config_content_type === 'prompt' ? defaultLlm(config.llms)?.provider : undefined;
    const keptProvider = provider === undefined ? undefined : this.providers.keptForRun(accountId, provider);

    // Listening before the run exists, so its end cannot slip by.
    const finished = mode === 'sync' ? this.finishedView(run.id, signal) : undefined;
    try {
      await this.engine.accept(run, check ? [check] : [], keptProvider);
    } catch (error) {
      finished?.stop();
      throw error;
    }
    if (!finished) return { mode: 'async', id: run.id };
    return { mode: 'sync', run: (await finished.view) ?? (await this.get(accountId, run.id)) };
  }

  async get(accountId: string, id: string): Promise<RunView> {
    return toRunView(await this.getRecord(accountId, id));
  }

  /** The account's runs, newest first, filtered by runnable and status. */
  async list(accountId: string, query: ListRunsQuery = {}): Promise<RunView[]> {
    const parsed = listRunsFilter().safeParse(query);
    if (!parsed.success) throw validationError(parsed.error, 'query');
    const { runnable_id, status, limit, offset } = parsed.data;
    const records = await this.runs.find(accountId, {
      where: { ...(runnable_id === undefined ? {} : { runnable_id }), ...(status === undefined ? {} : { status }) },
      orderBy: [
        { field: 'created_at', direction: 'desc' },
        { field: 'id', direction: 'desc' },
      ],
      limit,
      offset,
    });
    return records.map(toRunView);
  }

  /**
   * Cancels a queued or running run: it ends `cancelled` at once and a running model call is
   * aborted. 409 naming the status when the run has already finished.
   */
  async cancel(accountId: string, id: string): Promise<RunView> {
    for (let attempt = 1; attempt <= CANCEL_ATTEMPTS; attempt++) {
      const run = await this.getRecord(accountId, id);
      if (isFinished(run.status)) throw DomainError.conflict(`run ${id} is already ${run.status}; only a queued or running run can be cancelled`);
      const final = await this.engine.complete(run, { status: 'cancelled', error: describeFailure(new RunCancelled()) }, run.status);
      if (!final) continue;
      this.engine.abort(id);
      await this.engine.scheduleCallback(final);
      return toRunView(final);
    }
    throw DomainError.conflict(`run ${id} kept changing status while being cancelled; read it and retry`);
  }

  private getRecord(accountId: string, id: string): Promise<RunRecord> {
    return this.runs.require(accountId, id, `run ${id}`);
  }

  /** The run's final view once published; undefined when `signal` aborts first. */
  private finishedView(runId: string, signal: AbortSignal | undefined): { view: Promise<RunView | undefined>; stop(): void } {
    let stop = (): void => {};
    const view = new Promise<RunView | undefined>((resolve) => {
      const subscription = this.events.subscribe<RunView>(runTopic(runId), (event) => {
        if (!isFinished(event.data.status)) return;
        stop();
        resolve(event.data);
      });
      const onAbort = (): void => {
        stop();
        resolve(undefined);
      };
      stop = () => {
        subscription.unsubscribe();
        signal?.removeEventListener('abort', onAbort);
      };
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
    return { view, stop };
  }
}
