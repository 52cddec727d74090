import type { AccountRecord } from '../storage/repository';
import type { ModelChoiceInput, ProcessSpec, TaskType } from './process-spec';
import type { PhaseStatus, RunStatus, TaskStatus } from './process-transitions';

export interface TaskError {
  code: string;
  message: string;
}

/** A task as the API answers it (docs/api.md#process-runs). */
export interface ProcessTaskView {
  id: string;
  name: string;
  type: TaskType;
  status: TaskStatus;
  attempts: number;
  output: unknown;
  error: TaskError | null;
  started_at: string | null;
  completed_at: string | null;
}

export interface ProcessPhaseView {
  id: string;
  name: string;
  status: PhaseStatus;
  tasks: ProcessTaskView[];
}

/** A process run as the API answers it (docs/api.md#process-runs). */
export interface ProcessRunView {
  id: string;
  process_id: string;
  workspace_id: string;
  status: RunStatus;
  spec: ProcessSpec;
  inputs: Record<string, unknown>;
  metadata: Record<string, unknown>;
  instructions: string;
  phases: ProcessPhaseView[];
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
}

/** What the engine keeps about a task beside its view; never answered. */
export interface TaskState {
  /** `attempts` when the retry policy's count last started (0, or the attempts at a manual retry). */
  budget_from: number;
  /** Epoch ms: a pending task waiting for its retry starts no earlier. */
  retry_at: number | null;
  /** Epoch ms: when a running `wait` task is done. */
  due_at: number | null;
  /** The run (`runnable`) or command execution (`command`) the attempt started, followed again after a restart. */
  child_id: string | null;
}

export interface StoredTask extends ProcessTaskView {
  state: TaskState;
}

export interface StoredPhase extends Omit<ProcessPhaseView, 'tasks'> {
  tasks: StoredTask[];
}

/** The stored run: one document, so every transition is one conditional write (`revision`). */
export interface ProcessRunRecord extends Omit<ProcessRunView, 'phases'>, AccountRecord {
  phases: StoredPhase[];
  /** The request's model for prompt tasks, first in line (docs/api.md#process-runs). */
  model: ModelChoiceInput | null;
  revision: number;
  /** Log entries written so far; the next one is numbered `log_seq + 1`. */
  log_seq: number;
}

/** A line of a run's log: a transition, or a line of a task's output. */
export interface ProcessLogEntry {
  seq: number;
  at: string;
  type: 'transition' | 'output';
  phase_id: string | null;
  task_id: string | null;
  message: string;
}

export interface ProcessLogRecord extends ProcessLogEntry, AccountRecord {
  run_id: string;
}

export function toTaskView(task: StoredTask): ProcessTaskView {
  const { state: _state, ...view } = task;
  return view;
}

export function toProcessRunView(record: ProcessRunRecord): ProcessRunView {
  return {
    id: record.id,
    process_id: record.process_id,
    workspace_id: record.workspace_id,
    status: record.status,
    spec: record.spec,
    inputs: record.inputs,
    metadata: record.metadata,
    instructions: record.instructions,
    phases: record.phases.map((phase) => ({ id: phase.id, name: phase.name, status: phase.status, tasks: phase.tasks.map(toTaskView) })),
    created_at: record.created_at,
    started_at: record.started_at,
    completed_at: record.completed_at,
  };
}

export function toLogEntry(record: ProcessLogRecord): ProcessLogEntry {
  return { seq: record.seq, at: record.at, type: record.type, phase_id: record.phase_id, task_id: record.task_id, message: record.message };
}
