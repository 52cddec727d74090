export * from './ports';
export * from './config';
export { createRunloom, Runloom, type CreateRunloomOptions } from './runloom';
export { RunloomOptionsError } from './runloom-options';
// The inversify the core is built with: a host's `modules` must come from this copy of it.
export { ContainerModule } from 'inversify';
export { DomainError, DomainErrorCodes, type DomainErrorCode, type DomainErrorExtras, type CredentialChallenge, type ErrorDetail } from './domain/errors';
export { ApiError, ErrorCodes, type ErrorCode } from './http/api-error';
export { route, RouteTable, Authenticator, type RouteDefinition, type Principal } from './http/route';
export { Router } from './http/router';
// What a server adapter needs to translate its host's requests (see @runloom/server-adapter).
export { bodyCutOff, bodyTooLarge, decodeUtf8Body, readText, refuseDeclaredTooLarge, type ConnectionInfo, type Exchange } from './http/exchange';
export { jsonBodyText, jsonResponse, JSON_CONTENT_TYPE, type Answer, type SerializedJson } from './http/http-result';
export { Lifecycle } from './domain/lifecycle';
export { Migrations } from './domain/storage/migrations';
export { Repository } from './domain/storage/repository';
export * from './domain/runs/run-record';
export { RunRepository, RUNS_COLLECTION } from './domain/runs/run-repository';
export { RunService, type SubmittedRun } from './domain/runs/run-service';
export { RunEngine, RUN_JOB, MAX_RUN_ATTEMPTS } from './domain/runs/run-engine';
export type { RunRequest, ListRunsQuery, RunMode } from './domain/runs/run-schemas';
export { AuthService, type ClientCredentials, type TokenRequest, type TokenResponse } from './domain/auth/auth-service';
export { OAuthError, type OAuthErrorCode } from './domain/auth/oauth-error';
export { parseBootstrapClients, type BootstrapClient } from './domain/auth/bootstrap-clients';
export { PROVIDER_NAMES, isProviderName, type ProviderName } from './ports/provider-names';
export type { ProviderCredentials, ApiKeyCredentials, AzureOpenAiCredentials, AwsBedrockCredentials } from './domain/providers/provider-credentials';
export { ProviderService, ProviderUnavailableError, type ProviderConfigView, type ProviderConfigInput, type ProviderCallSettings } from './domain/providers/provider-service';
export { WebhookSecretService } from './domain/webhooks/webhook-secret-service';
export { GoldLabelService } from './domain/gold-labels/gold-label-service';
export type { GoldLabel, CreateGoldLabelInput, UpdateGoldLabelInput } from './domain/gold-labels/gold-label-schemas';
export { CallbackDispatcher, CALLBACK_DELIVERY_JOB, type RunCompletedEvent } from './domain/webhooks/callback-dispatcher';
export { EvaluationService } from './domain/evaluations/evaluation-service';
export {
  EVALUATION_METHODS,
  type Evaluation,
  type EvaluationComparison,
  type EvaluationMethod,
  type EvaluationDetails,
  type Mismatch,
  type CreateEvaluationInput,
} from './domain/evaluations/evaluation-schemas';
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
export { WorkspaceService } from './domain/workspaces/workspace-service';
export {
  RepositoryService,
  type ConnectRepositoryInput,
  type CommitInput,
  type RepositoryIntegration,
  type RepositoryChange,
} from './domain/repositories/repository-service';
export { RepositoryCloner, type RepositorySource } from './domain/repositories/repository-cloner';
export type { RepositoryConnection, RepositoryState, RepositoryStatus } from './domain/repositories/repository-record';
export { REPOSITORY_PROVIDERS, type RepositoryProvider } from './domain/repositories/repository-hosts';
export { CommandService } from './domain/commands/command-service';
export { CommandExecutionService, type ExecutionEvent } from './domain/commands/command-execution-service';
export { commandDefinitionSchema, type Command, type CommandExecution, type CreateCommandInput, type PatchCommandInput, type ExecuteCommandInput } from './domain/commands/command-schemas';
export { COMMANDS_DIR } from './domain/commands/command-files';
export { ProcessRunService } from './domain/processes/process-run-service';
export type { ProcessRunView, ProcessPhaseView, ProcessTaskView, ProcessLogEntry } from './domain/processes/process-run-record';
export type { CreateProcessRunInput, ApproveInput } from './domain/processes/process-schemas';
export { processSpecSchema, parseProcessSpec, type ProcessSpec, type PhaseSpec, type TaskSpec, type TaskType, type RetryPolicy } from './domain/processes/process-spec';
export { RUN_ACTIONS as PROCESS_RUN_ACTIONS, type RunStatus as ProcessRunStatus, type TaskStatus as ProcessTaskStatus, type PhaseStatus as ProcessPhaseStatus } from './domain/processes/process-transitions';
export { WorkspaceFileService, type FileChange, type FileDownload, type WriteOptions } from './domain/workspace-files/workspace-file-service';
export { WorkspaceEvents, type WorkspaceEvent, type PublishedWorkspaceEvent, type WorkspaceEventSubscription } from './domain/workspace-events/workspace-events';
export {
  openSseStream,
  pacedSseResponse,
  encodeSseFrame,
  sseBodyOf,
  SseSettings,
  DEFAULT_SSE_SETTINGS,
  type SseBody,
  type SseDelivery,
  type SseFrame,
  type SseStream,
  type SseStreamOptions,
  type SseCloseReason,
  type SseWriter,
  type PacedFrames,
  type PacedSseOptions,
  type PacedSseSource,
} from './http/sse';
export type { Workspace } from './domain/workspaces/workspace-record';
export { WORKSPACE_CONFIG_PATH, workspaceConfigSchema, readConfigDocument, type WorkspaceConfig } from './domain/workspaces/workspace-config';
export { locateYamlPath } from './domain/input/yaml-document';
export type { LifecycleEvent } from './domain/workspaces/workspace-record';
export type { LifecycleEventName } from './domain/workspaces/workspace-lifecycle';
export type { CreateWorkspaceInput, UpdateWorkspaceInput } from './domain/workspaces/workspace-service';
export { WorkspaceConfigService } from './domain/workspaces/workspace-config-service';
export { WorkspaceTemplateService } from './domain/workspaces/workspace-template-service';
export type { WorkspaceTemplate, WorkspaceTemplateSummary, CreateTemplateInput } from './domain/workspaces/workspace-template-schemas';
export {
  WorkspaceMetadataService,
  WorkspaceMetadataContributor,
  type WorkspaceMetadata,
  type WorkspaceMetadataContribution,
} from './domain/workspaces/workspace-metadata';
export type { Thread, ThreadMetadata, UIMessage, UIMessagePart, StreamThreadInput } from './domain/threads/thread-schemas';
export type { UIMessageChunk, ReplyStatus } from './domain/threads/reply-builder';
