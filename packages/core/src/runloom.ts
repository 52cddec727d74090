import { Container, type ContainerModule } from 'inversify';
import { modelsModule } from './adapters/models/models-module';
import { platformModule } from './adapters/platform-module';
import { defaultConfig, RunloomConfig } from './config';
import { authModule } from './domain/auth/auth-module';
import { AuthService } from './domain/auth/auth-service';
import { GoldLabelService } from './domain/gold-labels/gold-label-service';
import { goldLabelsModule } from './domain/gold-labels/gold-labels-module';
import { opsModule } from './domain/ops/ops-module';
import { EvaluationService } from './domain/evaluations/evaluation-service';
import { evaluationsModule } from './domain/evaluations/evaluations-module';
import { CommandExecutionService } from './domain/commands/command-execution-service';
import { CommandService } from './domain/commands/command-service';
import { commandsModule } from './domain/commands/commands-module';
import { Lifecycle } from './domain/lifecycle';
import { ProcessRunService } from './domain/processes/process-run-service';
import { processesModule } from './domain/processes/processes-module';
import { ProviderService } from './domain/providers/provider-service';
import { providersModule } from './domain/providers/providers-module';
import { RunnableService } from './domain/runnables/runnable-service';
import { runnablesModule } from './domain/runnables/runnables-module';
import { RepositoryService } from './domain/repositories/repository-service';
import { repositoriesModule } from './domain/repositories/repositories-module';
import { ResourceService } from './domain/resources/resource-service';
import { resourcesModule } from './domain/resources/resources-module';
import { RunService } from './domain/runs/run-service';
import { runsModule } from './domain/runs/runs-module';
import { Migrations } from './domain/storage/migrations';
import { settledInOrder } from './domain/settled-in-order';
import { WebhookSecretService } from './domain/webhooks/webhook-secret-service';
import { webhooksModule } from './domain/webhooks/webhooks-module';
import { ThreadService } from './domain/threads/thread-service';
import { ThreadStreams } from './domain/threads/thread-streams';
import { threadsModule } from './domain/threads/threads-module';
import { WorkspaceConfigService } from './domain/workspaces/workspace-config-service';
import { WorkspaceMetadataService } from './domain/workspaces/workspace-metadata';
import { WorkspaceService } from './domain/workspaces/workspace-service';
import { WorkspaceTemplateService } from './domain/workspaces/workspace-template-service';
import { workspacesModule } from './domain/workspaces/workspaces-module';
import { workspaceEventsModule } from './domain/workspace-events/workspace-events-module';
import { WorkspaceFileService } from './domain/workspace-files/workspace-file-service';
import { workspaceFilesModule } from './domain/workspace-files/workspace-files-module';
import { WorkspaceEvents } from './domain/workspace-events/workspace-events';
import type { ConnectionInfo, Exchange } from './http/exchange';
import { httpModule } from './http/http-module';
import type { Answer } from './http/http-result';
import { Router } from './http/router';
import { Database } from './ports/database';
import { DurableEventBus, EventBus } from './ports/event-bus';
import { JobQueue } from './ports/job-queue';
import { Logger } from './ports/logger';
import { parseRunloomOptions } from './runloom-options';

export interface CreateRunloomOptions extends Partial<RunloomConfig> {
  /**
   * Loaded after the defaults: rebind any port here, e.g.
   * `new ContainerModule(({ rebind }) => rebind(Clock).toConstantValue(myClock))`.
   */
  modules?: ContainerModule[];
}

/** Feature modules in start order; their migrations and lifecycles run in this order. */
const featureModules: ContainerModule[] = [
  // First, so health, readiness, metrics and the OpenAPI document lead the route list as before.
  opsModule,
  authModule,
  runsModule,
  resourcesModule,
  providersModule,
  webhooksModule,
  goldLabelsModule,
  evaluationsModule,
  runnablesModule,
  modelsModule,
  workspacesModule,
  repositoriesModule,
  workspaceFilesModule,
  threadsModule,
  workspaceEventsModule,
  commandsModule,
  processesModule,
];

/**
 * The whole service in-process. `handle(request)` is the HTTP surface; the named services are the
 * same operations for Node callers. Call `close()` to finish in-flight work and flush the store.
 */
export class Runloom {
  private closing: Promise<void> | undefined;

  constructor(
    readonly container: Container,
    readonly config: RunloomConfig,
    private readonly router: Router,
    private readonly lifecycles: Lifecycle[],
  ) {}

  /** Service-account clients and tokens. */
  get auth(): AuthService {
    return this.container.get<AuthService>(AuthService);
  }

  /** LLM provider configurations; credentials for model calls. */
  get providers(): ProviderService {
    return this.container.get<ProviderService>(ProviderService);
  }

  /** The account's webhook signing secret. */
  get webhooks(): WebhookSecretService {
    return this.container.get<WebhookSecretService>(WebhookSecretService);
  }

  /** Gold labels of runs. */
  get goldLabels(): GoldLabelService {
    return this.container.get<GoldLabelService>(GoldLabelService);
  }

  /** Evaluations of run outputs against gold labels. */
  get evaluations(): EvaluationService {
    return this.container.get<EvaluationService>(EvaluationService);
  }

  /** Runnables: prompt, flow and agent configurations with their version history. */
  get runnables(): RunnableService {
    return this.container.get<RunnableService>(RunnableService);
  }

  /** Stored resources: uploads, downloads, shared content. */
  get resources(): ResourceService {
    return this.container.get<ResourceService>(ResourceService);
  }

  /** Runs: submit (async or sync), read, list, cancel. */
  get runs(): RunService {
    return this.container.get<RunService>(RunService);
  }

  /** Workspaces: records, their files, their lifecycle. */
  get workspaces(): WorkspaceService {
    return this.container.get<WorkspaceService>(WorkspaceService);
  }

  /** Each workspace's configuration (`.runloom/workspace-config.runloom.yaml`): get, deep-merge a change. */
  get workspaceConfig(): WorkspaceConfigService {
    return this.container.get<WorkspaceConfigService>(WorkspaceConfigService);
  }

  /** Workspace templates: files or a git repository a new workspace starts from. */
  get workspaceTemplates(): WorkspaceTemplateService {
    return this.container.get<WorkspaceTemplateService>(WorkspaceTemplateService);
  }

  /** A workspace's summary for display: files, threads, commands, process runs, last activity. */
  get workspaceMetadata(): WorkspaceMetadataService {
    return this.container.get<WorkspaceMetadataService>(WorkspaceMetadataService);
  }

  /** Workspaces' git repositories: connections, clone, pull, commit, push, status. */
  get repositories(): RepositoryService {
    return this.container.get<RepositoryService>(RepositoryService);
  }

  /** Commands of workspaces: their files and index, search, usage. */
  get commands(): CommandService {
    return this.container.get<CommandService>(CommandService);
  }

  /** Executions of workspace commands: execute, read, follow, cancel, wait for the end. */
  get commandExecutions(): CommandExecutionService {
    return this.container.get<CommandExecutionService>(CommandExecutionService);
  }

  /** Files and directories of workspaces: read, write, move, delete, zip, PDF, path search. */
  get workspaceFiles(): WorkspaceFileService {
    return this.container.get<WorkspaceFileService>(WorkspaceFileService);
  }

  /** The event stream of each workspace (`GET /workspace/{id}/events`): publish and follow changes. */
  get workspaceEvents(): WorkspaceEvents {
    return this.container.get<WorkspaceEvents>(WorkspaceEvents);
  }

  /** Chat threads of workspaces: files under `.runloom/threads/` and their metadata index. */
  get threads(): ThreadService {
    return this.container.get<ThreadService>(ThreadService);
  }

  /** Streamed replies of threads: start one, rejoin or cancel it, list the active ones. */
  get threadStreams(): ThreadStreams {
    return this.container.get<ThreadStreams>(ThreadStreams);
  }

  /** Process runs of workspaces: create, start, pause, resume, cancel, approve, retry and skip tasks. */
  get processes(): ProcessRunService {
    return this.container.get<ProcessRunService>(ProcessRunService);
  }

  /**
   * Web-standard request in, response out: mount it on any server (see server-adapter). Pass the
   * peer's address in `connection` so per-address limits (the token endpoint's) see who is calling;
   * without it, every caller counts as one unknown address.
   */
  handle(request: Request, connection?: ConnectionInfo): Promise<Response> {
    return this.router.handle(request, connection);
  }

  /**
   * `handle` for server adapters: reads the request through `exchange` and answers JSON already
   * serialised, so a JSON exchange builds no web `Request` or `Response`.
   */
  dispatch(exchange: Exchange): Promise<Answer> {
    return this.router.dispatch(exchange);
  }

  /** Stops background work, then flushes and closes the store. Safe to call more than once. */
  close(): Promise<void> {
    this.closing ??= stopStarted(this.container, { lifecycles: this.lifecycles, queue: true, database: true }).then((errors) => {
      if (errors.length > 0) throw errors[0];
    });
    return this.closing;
  }
}

/**
 * Validates `options` (a bad one is a `RunloomOptionsError` naming it), opens the store, applies
 * every migration and starts every `Lifecycle` and the job queue. When any of that throws, what was
 * already started is stopped and the store closed (releasing the data dir's lock) before the error
 * is rethrown, so the same data dir can be opened again in this process.
 */
export async function createRunloom(options: CreateRunloomOptions = {}): Promise<Runloom> {
  const { overrides, modules } = parseRunloomOptions(options);
  const config: RunloomConfig = { ...defaultConfig, ...overrides };
  const container = new Container({ defaultScope: 'Singleton' });
  container.bind(RunloomConfig).toConstantValue(config);
  const started: Started = { lifecycles: [], queue: false, database: false };
  try {
    await container.loadAsync(platformModule, httpModule, ...featureModules, ...modules);
    const migrated = container.getAsync<Database>(Database).then((database) => {
      started.database = true;
      return database.migrate(container.isBound(Migrations) ? container.getAll<Migrations>(Migrations).flat() : []);
    });
    // The lifecycles are made while the store opens and applies the migrations: making them opens
    // what they need (the secret key file, the event bus's connection), never the store's
    // collections, so their I/O (the fresh key file's syncs) goes on meanwhile rather than after.
    // Both end before either's failure is thrown, the store's first.
    const [, lifecycles] = await settledInOrder(
      migrated,
      container.isBound(Lifecycle) ? container.getAllAsync<Lifecycle>(Lifecycle) : Promise.resolve([]),
    );
    const queue = container.get<JobQueue>(JobQueue);
    const start = async (): Promise<void> => {
      for (const lifecycle of lifecycles) {
        // Listed before it starts: one that throws halfway may have started part of its work.
        started.lifecycles.push(lifecycle);
        await lifecycle.start?.();
      }
      started.queue = true;
      await queue.start();
    };
    // Likewise the router is made while the lifecycles start (the fsyncs of their first writes: a
    // fresh store's signing key); both end before either's failure is thrown, the start's first.
    const [, router] = await settledInOrder(start(), container.getAsync<Router>(Router));
    return new Runloom(container, config, router, lifecycles);
  } catch (error) {
    const errors = await stopStarted(container, started);
    if (errors.length > 0) logCleanupErrors(container, errors);
    throw error;
  }
}

/** What `createRunloom` has started so far, i.e. what stopping must undo. */
interface Started {
  lifecycles: Lifecycle[];
  queue: boolean;
  database: boolean;
}

/**
 * Stops the lifecycles in reverse start order, then the job queue and the event bus, then closes the
 * store. Every step runs even when an earlier one fails (a store left open keeps the data dir
 * locked); the failures are answered.
 */
async function stopStarted(container: Container, started: Started): Promise<unknown[]> {
  const errors: unknown[] = [];
  const attempt = async (step: () => Promise<void> | undefined): Promise<void> => {
    try {
      await step();
    } catch (error) {
      errors.push(error);
    }
  };
  for (const lifecycle of [...started.lifecycles].reverse()) await attempt(() => lifecycle.stop?.());
  if (started.queue) await attempt(() => container.get<JobQueue>(JobQueue).stop());
  if (started.database) {
    await attempt(() => container.get<EventBus>(EventBus).close());
    // After the lifecycles and the queue: publishes they made finish their writes before the store closes.
    await attempt(() => container.get<EventBus>(DurableEventBus).close());
    await attempt(() => container.get<Database>(Database).close());
  }
  return errors;
}

/** Failures while undoing a failed start: logged, since the error the caller sees is the start's. */
function logCleanupErrors(container: Container, errors: unknown[]): void {
  try {
    const logger = container.get<Logger>(Logger);
    for (const error of errors) logger.error({ error: error instanceof Error ? error.message : String(error) }, 'stopping after a failed start failed');
  } catch {
    // No logger to tell: the start's own error is still thrown.
  }
}
