import path from 'node:path';
import { ContainerModule } from 'inversify';
import { RunloomConfig } from '../config';
import { Metrics } from '../ports/metrics';
import { PromClientMetrics } from './node/prom-client-metrics';
import { Migrations } from '../domain/storage/migrations';
import { platformMigrations } from '../domain/storage/platform-migrations';
import { ArchiveWriter } from '../ports/archive-writer';
import { BlobStore } from '../ports/blob-store';
import { Clock } from '../ports/clock';
import { ContentHasher } from '../ports/content-hasher';
import { Database } from '../ports/database';
import { DocumentConverter } from '../ports/document-converter';
import { DurableEventBus, EventBus } from '../ports/event-bus';
import { IdGenerator } from '../ports/id-generator';
import { JobQueue } from '../ports/job-queue';
import { GitClient } from '../ports/git-client';
import { HttpClient } from '../ports/http-client';
import { Logger } from '../ports/logger';
import { MessageSigner } from '../ports/message-signer';
import { PasswordHasher } from '../ports/password-hasher';
import { PatternMatcher } from '../ports/pattern-matcher';
import { ProcessLauncher } from '../ports/process-launcher';
import { MultipartParser } from '../ports/multipart-parser';
import { SecretBox } from '../ports/secret-box';
import { WorkspaceFileSystems } from '../ports/workspace-file-system';
import { DatabaseEventBus, eventBusMigrations } from './database-event-bus';
import { MemoryEventBus } from './memory/memory-event-bus';
import { openPostgresDatabase, PostgresDatabase } from './postgres/postgres-database';
import { PostgresEventBus } from './postgres/postgres-event-bus';
import { AesGcmSecretBox } from './node/aes-gcm-secret-box';
import { BusboyMultipartParser } from './node/busboy-multipart-parser';
import { HmacMessageSigner } from './node/hmac-message-signer';
import { LocalDiskBlobStore } from './node/local-disk-blob-store';
import { S3BlobStore } from './s3/s3-blob-store';
import { isS3Url, parseS3Location } from './s3/s3-location';
import { NodeWorkspaceFileSystems } from './node/node-workspace-file-system';
import { NodeContentHasher } from './node/node-content-hasher';
import { GuardedHttpClient } from './node/guarded-http-client';
import { IsomorphicGitClient } from './git/isomorphic-git-client';
import { SilentLogger } from './node/pino-logger';
import { ScryptPasswordHasher } from './node/scrypt-password-hasher';
import { SofficeDocumentConverter } from './node/soffice-document-converter';
import { SystemClock } from './node/system-clock';
import { UuidV7Generator } from './node/uuid-v7-generator';
import { WorkerPatternMatcher } from './node/worker-pattern-matcher';
import { NodeProcessLauncher } from './node/node-process-launcher';
import { YazlArchiveWriter } from './node/yazl-archive-writer';
import { DatabaseJobQueue, jobMigrations } from './queue/database-job-queue';
import { openSqlJsDatabase } from './sqljs/sqljs-database';

/**
 * Default adapters of every port. A host replaces any of them by passing a module to
 * `createRunloom({ modules })` that rebinds the port.
 */
export const platformModule = new ContainerModule(({ bind }) => {
  bind(Clock).toConstantValue(new SystemClock());
  bind(IdGenerator).toConstantValue(new UuidV7Generator());
  bind(ContentHasher).toConstantValue(new NodeContentHasher());
  bind(Logger).toConstantValue(new SilentLogger());
  bind(Metrics).toConstantValue(new PromClientMetrics());
  bind(PasswordHasher).toConstantValue(new ScryptPasswordHasher());
  bind(HttpClient)
    .toResolvedValue(
      // The one egress policy of every outbound request: model vendors, callbacks, agent HTTP tools.
      (config: RunloomConfig) => new GuardedHttpClient({ egress: { allowPrivateNetwork: config.allowPrivateNetwork, allow: config.egressAllow } }),
      [RunloomConfig],
    )
    .inSingletonScope();
  // Git remotes are reached through the same HttpClient, so the same egress policy.
  bind(GitClient)
    .toResolvedValue((http: HttpClient) => new IsomorphicGitClient({ http }), [HttpClient])
    .inSingletonScope();
  bind(PatternMatcher).toConstantValue(new WorkerPatternMatcher());
  bind(ProcessLauncher).toConstantValue(new NodeProcessLauncher());
  bind(Database)
    .toResolvedValue((config: RunloomConfig, logger: Logger) => openDatabase(config, logger), [RunloomConfig, Logger])
    .inSingletonScope();
  bind(Migrations).toConstantValue(platformMigrations);
  bind(SecretBox)
    .toResolvedValue((config: RunloomConfig) => AesGcmSecretBox.fromConfig(config), [RunloomConfig])
    .inSingletonScope();
  // Runs' in-process notifications need no write; streams clients replay (workspace events) do.
  // Nothing replays them either (a waiter subscribes, then reads the store), so no backlog: kept,
  // the last 10,000 finished runs' views stayed in the heap for every major GC to mark.
  bind(EventBus)
    .toResolvedValue((logger: Logger) => new MemoryEventBus({ logger, backlogPerTopic: 0 }), [Logger])
    .inSingletonScope();
  bind(Migrations).toConstantValue(eventBusMigrations);
  // On PostgreSQL, LISTEN/NOTIFY wakes the subscribers of every instance sharing the database.
  bind(DurableEventBus)
    .toResolvedValue(
      (database: Database, clock: Clock, logger: Logger) =>
        database instanceof PostgresDatabase ? PostgresEventBus.open({ database, clock, logger }) : new DatabaseEventBus({ database, logger }),
      [Database, Clock, Logger],
    )
    .inSingletonScope();
  bind(BlobStore)
    .toResolvedValue((config: RunloomConfig, logger: Logger) => openBlobStore(config, logger), [RunloomConfig, Logger])
    .inSingletonScope();
  bind(MultipartParser).toConstantValue(new BusboyMultipartParser());
  bind(WorkspaceFileSystems)
    .toResolvedValue((config: RunloomConfig) => new NodeWorkspaceFileSystems(config.workspacesDir ?? path.join(config.dataDir, 'workspaces')), [RunloomConfig])
    .inSingletonScope();
  // Signed workspace upload URLs: keyed from the same secret key as the SecretBox.
  bind(MessageSigner)
    .toResolvedValue((config: RunloomConfig) => HmacMessageSigner.fromConfig(config), [RunloomConfig])
    .inSingletonScope();
  bind(ArchiveWriter).toConstantValue(new YazlArchiveWriter());
  bind(DocumentConverter)
    .toResolvedValue((config: RunloomConfig) => new SofficeDocumentConverter({ cacheDir: path.join(config.dataDir, 'cache', 'pdf') }), [RunloomConfig])
    .inSingletonScope();
  bind(Migrations).toConstantValue(jobMigrations);
  bind(JobQueue)
    .toResolvedValue(
      (database: Database, clock: Clock, ids: IdGenerator, logger: Logger) =>
        new DatabaseJobQueue({
          database,
          clock,
          ids,
          logger,
        }),
      [Database, Clock, IdGenerator, Logger],
    )
    .inSingletonScope();
});

/**
 * The store: the durable sql.js files in `<dataDir>/db` unless `databaseUrl` selects another one.
 * Refuses a URL it has no adapter for rather than quietly keeping records somewhere else.
 */
function openDatabase(config: RunloomConfig, logger: Logger): Promise<Database> {
  if (config.databaseUrl !== undefined) {
    if (/^postgres(ql)?:\/\//i.test(config.databaseUrl)) return openPostgresDatabase(config.databaseUrl, { logger });
    throw new Error(`databaseUrl must be a postgres:// or postgresql:// URL; leave it unset to use the embedded store in ${config.dataDir}`);
  }
  return openSqlJsDatabase({ dir: path.join(config.dataDir, 'db'), logger });
}

/**
 * Where resource bytes live: `<dataDir>/blobs` unless `blobStore` names another folder, or an
 * S3-compatible bucket (`s3://bucket/prefix`, at `s3Endpoint` when given) that instances share.
 */
function openBlobStore(config: RunloomConfig, logger: Logger): BlobStore {
  const location = config.blobStore ?? path.join(config.dataDir, 'blobs');
  if (!isS3Url(location)) return new LocalDiskBlobStore(location);
  return new S3BlobStore({ ...parseS3Location(location), endpoint: config.s3Endpoint, logger });
}
