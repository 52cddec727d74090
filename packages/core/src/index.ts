export * from './ports';
export * from './config';
export { createRunloom, Runloom, type CreateRunloomOptions } from './runloom';
export { ApiError, ErrorCodes, type ErrorCode } from './http/api-error';
export { route, RouteTable, Authenticator, type RouteDefinition, type Principal } from './http/route';
export { Router } from './http/router';
export type { Exchange } from './http/exchange';
export type { Answer, SerializedJson } from './http/http-result';
export { Lifecycle } from './domain/lifecycle';
export { Migrations } from './domain/storage/migrations';
export { Repository } from './domain/storage/repository';
export { MemoryDatabase } from './adapters/memory/memory-database';
export { openSqlJsDatabase, SqlJsDatabase, type SqlJsDatabaseOptions } from './adapters/sqljs/sqljs-database';
export { MemoryEventBus, type MemoryEventBusOptions } from './adapters/memory/memory-event-bus';
export { AesGcmSecretBox } from './adapters/node/aes-gcm-secret-box';
export { DatabaseJobQueue, jobMigrations, type DatabaseJobQueueOptions } from './adapters/queue/database-job-queue';
export { PostgresDatabase, openPostgresDatabase, type PostgresDatabaseOptions } from './adapters/postgres/postgres-database';
export * from './domain/runs/run-record';
export { RunRepository, RUNS_COLLECTION } from './domain/runs/run-repository';
export { RunService, type SubmittedRun } from './domain/runs/run-service';
export { RunEngine, RUN_JOB, MAX_RUN_ATTEMPTS } from './domain/runs/run-engine';
export type { RunRequest, ListRunsQuery, RunMode } from './domain/runs/run-schemas';
export { AuthService, type ClientCredentials, type TokenRequest, type TokenResponse } from './domain/auth/auth-service';
export { OAuthError, type OAuthErrorCode } from './domain/auth/oauth-error';
export { parseBootstrapClients, type BootstrapClient } from './domain/auth/bootstrap-clients';
export { ScryptPasswordHasher } from './adapters/node/scrypt-password-hasher';
export { PROVIDER_NAMES, isProviderName, type ProviderName } from './ports/provider-names';
export type { ProviderCredentials, ApiKeyCredentials, AzureOpenAiCredentials, AwsBedrockCredentials } from './domain/providers/provider-credentials';
export { ProviderService, ProviderUnavailableError, type ProviderConfigView, type ProviderConfigInput } from './domain/providers/provider-service';
export { WebhookSecretService } from './domain/webhooks/webhook-secret-service';
export { GoldLabelService } from './domain/gold-labels/gold-label-service';
export type { GoldLabel, CreateGoldLabelInput, UpdateGoldLabelInput } from './domain/gold-labels/gold-label-schemas';
export { CallbackDispatcher, CALLBACK_DELIVERY_JOB, type RunCompletedEvent } from './domain/webhooks/callback-dispatcher';
export { EvaluationService } from './domain/evaluations/evaluation-service';
export {
  EVALUATION_METHODS,
  type Evaluation,
  type EvaluationMethod,
  type EvaluationDetails,
  type Mismatch,
  type CreateEvaluationInput,
} from './domain/evaluations/evaluation-schemas';
export { GuardedHttpClient, type GuardedHttpClientOptions, type HostResolver, type ResolvedAddress } from './adapters/node/guarded-http-client';
export { parseEgressAllow, type EgressAllowEntry } from './adapters/node/address-policy';
export { WorkerPatternMatcher } from './adapters/node/worker-pattern-matcher';
export { RunnableService } from './domain/runnables/runnable-service';
export type { Runnable, RunnableVersion } from './domain/runnables/runnable-record';
export type { CreateRunnableInput, UpdateRunnableInput, ListRunnablesQuery } from './domain/runnables/runnable-schemas';
export { EnabledProviders } from './domain/runnables/enabled-providers';
export { mimeTypeMatches, isMimePattern } from './domain/runnables/mime-patterns';
export {
  parseRunnableConfig,
  formatRunnableConfig,
  runnableConfigSchema,
  RUNNABLE_TYPES,
  type RunnableType,
  type RunnableConfig,
  type PromptConfig,
  type FlowConfig,
  type AgentConfig,
  type ConfigDiagnostic,
  type ParsedRunnableConfig,
} from './domain/runnables/config-schema';
export { ResourceService, type ReceivedContent } from './domain/resources/resource-service';
export { ResourceUploads } from './domain/resources/resource-uploads';
export { ResourceUsage } from './domain/resources/resource-usage';
export type { Resource, ExternalStorageType } from './domain/resources/resource-record';
export type { NewResource, ResourcePatch, ResourceListQuery } from './domain/resources/resource-schemas';
export { LocalDiskBlobStore } from './adapters/node/local-disk-blob-store';
export { BusboyMultipartParser } from './adapters/node/busboy-multipart-parser';
export { modelsModule } from './adapters/models/models-module';
export { AiSdkModelGateway, type AiSdkModelGatewayOptions } from './adapters/models/ai-sdk-gateway';
export { ModelVendors, defaultModelVendors } from './adapters/models/model-vendors';
export type { ModelVendor } from './adapters/models/model-vendor';
