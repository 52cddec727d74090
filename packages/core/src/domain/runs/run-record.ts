import type { AccountRecord } from '../storage/repository';

/** Run statuses: `queued → running → succeeded | failed | cancelled | timed_out` (docs/api.md#runs). */
export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'timed_out'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Statuses a run never leaves. */
export const FINISHED_RUN_STATUSES = ['succeeded', 'failed', 'cancelled', 'timed_out'] as const satisfies readonly RunStatus[];
/** Statuses of a run that still holds its embedded resources. */
export const ACTIVE_RUN_STATUSES = ['queued', 'running'] as const satisfies readonly RunStatus[];

export function isFinished(status: RunStatus): boolean {
  return (FINISHED_RUN_STATUSES as readonly RunStatus[]).includes(status);
}

export const TELEMETRY_STRATEGIES = ['default', 'force', 'disable'] as const;
export type TelemetryStrategy = (typeof TELEMETRY_STRATEGIES)[number];

export const CALLBACK_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type CallbackStatus = (typeof CALLBACK_STATUSES)[number];

/** One output of a run: text or a structured (JSON) value, never both. */
export type RunOutput = { name: string; mime_type: string } & (
  | { text_value: string; object_value?: never }
  | { object_value: unknown; text_value?: never }
);

/**
 * A resource embedded into the run under a placeholder `name`, snapshotted at submission so the
 * record stays true after the stored resource is renamed or deleted.
 */
export interface RunResource {
  name: string;
  resource: { id: string; name: string; mime_type: string; sha256: string; size_bytes: number };
}

export interface RunError {
  code: string;
  message: string;
}

export interface RunUsage {
  input_tokens: number;
  output_tokens: number;
}

/** Delivery state of the completion callback, as the run record shows it. */
export interface RunCallback {
  url: string;
  status: CallbackStatus;
  attempts: number;
  last_status_code: number | null;
}

/** One model call of a traced run. */
export interface TraceModelCall {
  /** Name of the step that made the call. */
  step: string;
  provider: string;
  model: string;
  started_at: string;
  latency_ms: number;
  input_tokens: number;
  output_tokens: number;
  /** Why the model stopped (`stop`, `tool-calls`, …); null when the call failed. */
  finish_reason: string | null;
  error: RunError | null;
}

/**
 * One step of a traced run: the run itself (`run`), a prompt, a flow step, an agent turn or a
 * tool call. Steps are listed in the order they started.
 */
export interface TraceStep {
  name: string;
  kind: 'run' | 'prompt' | 'flow_step' | 'agent_turn' | 'tool';
  started_at: string;
  ended_at: string;
  latency_ms: number;
  status: 'succeeded' | 'failed';
  error: RunError | null;
}

/** The telemetry of one run (docs/api.md#runs): steps and model calls with latencies and tokens. */
export interface RunTrace {
  steps: TraceStep[];
  model_calls: TraceModelCall[];
}

/** What the run executes, copied from the runnable at submission: a later edit or delete changes nothing. */
export interface RunnableSnapshot {
  name: string;
  config_content_type: 'prompt' | 'flow' | 'agent';
  config_content_parsed: Record<string, unknown>;
}

/** The fields `GET /v1/run/{id}` answers with (docs/api.md#runs), in that order, plus the telemetry `trace`. */
export interface RunView {
  id: string;
  account_id: string;
  runnable_id: string;
  runnable_sha256: string;
  status: RunStatus;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  timeout_seconds: number | null;
  telemetry_strategy: TelemetryStrategy;
  telemetry_enabled: boolean;
  resources: RunResource[];
  outputs: RunOutput[];
  error: RunError | null;
  usage: RunUsage;
  callback: RunCallback | null;
  /** Recorded when `telemetry_enabled`; null otherwise and until the run ends. */
  trace: RunTrace | null;
}

/**
 * The stored run: the public view plus what only the engine reads. None of the internal fields is
 * ever answered; `toRunView` is the one way out.
 */
export interface RunRecord extends RunView, AccountRecord {
  /** The configuration this run executes. */
  runnable_snapshot: RunnableSnapshot;
  /** Ids of `resources`, a queryable field: a resource cannot be deleted while an active run embeds it. */
  resource_ids: string[];
  /** The callback's extra headers as JSON, sealed by the `SecretBox` (they often carry credentials). */
  sealed_callback_headers: string | null;
}

export function toRunView(record: RunRecord): RunView {
  return {
    id: record.id,
    account_id: record.account_id,
    runnable_id: record.runnable_id,
    runnable_sha256: record.runnable_sha256,
    status: record.status,
    created_at: record.created_at,
    started_at: record.started_at,
    completed_at: record.completed_at,
    timeout_seconds: record.timeout_seconds,
    telemetry_strategy: record.telemetry_strategy,
    telemetry_enabled: record.telemetry_enabled,
    resources: record.resources,
    outputs: record.outputs,
    error: record.error,
    usage: record.usage,
    callback: record.callback,
    trace: record.trace,
  };
}
