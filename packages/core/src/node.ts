/**
 * `@runloom/core/node`: the default adapters of the ports, for hosts that bind them themselves
 * (`createRunloom({ modules: [new ContainerModule(({ rebind }) => { rebind(Logger).toConstantValue(new PinoLogger(…)) })] })`)
 * or test an adapter of their own against ours. `createRunloom` binds these by default.
 */
export { platformModule } from './adapters/platform-module';
export { MemoryDatabase } from './adapters/memory/memory-database';
export { MemoryEventBus, type MemoryEventBusOptions } from './adapters/memory/memory-event-bus';
export { MemoryWorkspaceFileSystem, MemoryWorkspaceFileSystems } from './adapters/memory/memory-workspace-file-system';
export { DatabaseEventBus, eventBusMigrations, type DatabaseEventBusOptions } from './adapters/database-event-bus';
export { openSqlJsDatabase, SqlJsDatabase, StoreLockedError, type SqlJsDatabaseOptions } from './adapters/sqljs/sqljs-database';
export { writeFreshStoreTemplate } from './adapters/sqljs/fresh-store-template';
export { PostgresDatabase, openPostgresDatabase, type PostgresDatabaseOptions } from './adapters/postgres/postgres-database';
export { DatabaseJobQueue, jobMigrations, type DatabaseJobQueueOptions } from './adapters/queue/database-job-queue';
export { AesGcmSecretBox, SECRET_KEY_FILE } from './adapters/node/aes-gcm-secret-box';
export { ScryptPasswordHasher, type ScryptParameters } from './adapters/node/scrypt-password-hasher';
export { NodeContentHasher } from './adapters/node/node-content-hasher';
export { GuardedHttpClient, type GuardedHttpClientOptions, type HostResolver, type ResolvedAddress } from './adapters/node/guarded-http-client';
export { IsomorphicGitClient, type IsomorphicGitClientOptions } from './adapters/git/isomorphic-git-client';
export { parseEgressAllow, type EgressAllowEntry } from './adapters/node/address-policy';
export { WorkerPatternMatcher } from './adapters/node/worker-pattern-matcher';
export { NodeProcessLauncher } from './adapters/node/node-process-launcher';
export { LocalDiskBlobStore } from './adapters/node/local-disk-blob-store';
export { S3BlobStore, S3RequestError, type S3BlobStoreOptions } from './adapters/s3/s3-blob-store';
export { blobStoreProblem, checkS3Endpoint, isS3Url, parseS3Location, type S3Location } from './adapters/s3/s3-location';
export { isWorkspaceTempName, NodeWorkspaceFileSystem, NodeWorkspaceFileSystems } from './adapters/node/node-workspace-file-system';
export { BusboyMultipartParser } from './adapters/node/busboy-multipart-parser';
export { HmacMessageSigner } from './adapters/node/hmac-message-signer';
export { YazlArchiveWriter } from './adapters/node/yazl-archive-writer';
export { SofficeDocumentConverter, type SofficeDocumentConverterOptions } from './adapters/node/soffice-document-converter';
export { PinoLogger, SilentLogger } from './adapters/node/pino-logger';
export { SystemClock } from './adapters/node/system-clock';
export { UuidV7Generator } from './adapters/node/uuid-v7-generator';
export { modelsModule } from './adapters/models/models-module';
export { AiSdkModelGateway, type AiSdkModelGatewayOptions } from './adapters/models/ai-sdk-gateway';
export { ModelVendors, defaultModelVendors } from './adapters/models/model-vendors';
export type { ModelVendor } from './adapters/models/model-vendor';
