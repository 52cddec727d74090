import { DomainError } from '../errors';

/**
 * The one table of process run states (docs/api.md#process-runs): which statuses a run, a phase and
 * a task may have, which moves between them exist, and which client actions each status allows.
 * The engine moves only along `RUN_MOVES`/`TASK_MOVES` (`moveRun`, `moveTask` assert it) and the
 * service asks `requireRunAction`/`requireTaskAction` before acting, so a refused action is a 409
 * naming the current state.
 */
export const RUN_STATUSES = ['created', 'running', 'paused', 'waiting_approval', 'succeeded', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const TASK_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'skipped', 'cancelled', 'waiting_approval'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const PHASE_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'skipped', 'cancelled'] as const;
export type PhaseStatus = (typeof PHASE_STATUSES)[number];

/**
 * Moves of a run. `failed → running | waiting_approval | succeeded`: a retry or skip of the failed
 * task lets the run go on (later phases stay `pending` for that reason). `paused → succeeded |
 * failed`: the tasks still running when it was paused may end the run.
 */
export const RUN_MOVES: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  created: ['running', 'cancelled'],
  running: ['paused', 'waiting_approval', 'succeeded', 'failed', 'cancelled'],
  paused: ['running', 'waiting_approval', 'succeeded', 'failed', 'cancelled'],
  waiting_approval: ['running', 'succeeded', 'failed', 'cancelled'],
  failed: ['running', 'waiting_approval', 'succeeded'],
  succeeded: [],
  cancelled: [],
};

/**
 * Moves of a task. `running → pending`: a failed attempt with attempts left waits for its retry;
 * `failed → pending`: a manual retry; `pending | failed → skipped`: a manual skip.
 */
export const TASK_MOVES: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  pending: ['running', 'waiting_approval', 'skipped', 'cancelled'],
  running: ['succeeded', 'failed', 'pending', 'cancelled'],
  waiting_approval: ['succeeded', 'failed', 'cancelled'],
  failed: ['pending', 'skipped'],
  succeeded: [],
  skipped: [],
  cancelled: [],
};

export type RunAction = 'start' | 'pause' | 'resume' | 'cancel' | 'approve' | 'retry' | 'skip';

/** The run statuses in which each client action is allowed. */
export const RUN_ACTIONS: Readonly<Record<RunAction, readonly RunStatus[]>> = {
  start: ['created'],
  pause: ['running'],
  resume: ['paused'],
  cancel: ['created', 'running', 'paused', 'waiting_approval'],
  approve: ['waiting_approval'],
  retry: ['created', 'running', 'paused', 'waiting_approval', 'failed'],
  skip: ['created', 'running', 'paused', 'waiting_approval', 'failed'],
};

export type TaskAction = 'approve' | 'retry' | 'skip';

/** The task statuses in which each task action is allowed. */
export const TASK_ACTIONS: Readonly<Record<TaskAction, readonly TaskStatus[]>> = {
  approve: ['waiting_approval'],
  retry: ['failed', 'pending'],
  skip: ['failed', 'pending'],
};

export const FINAL_RUN_STATUSES: readonly RunStatus[] = ['succeeded', 'cancelled'];
export const DONE_TASK_STATUSES: readonly TaskStatus[] = ['succeeded', 'skipped'];

/** 409 naming the run's status unless it allows `action`. */
export function requireRunAction(runId: string, status: RunStatus, action: RunAction): void {
  const allowed = RUN_ACTIONS[action];
  if (!allowed.includes(status)) {
    throw DomainError.conflict(`process run ${runId} is ${status}; ${action} is allowed only when it is ${allowed.join(' or ')}`);
  }
}

/** 409 naming the task's status unless it allows `action`. */
export function requireTaskAction(phaseId: string, taskId: string, status: TaskStatus, action: TaskAction): void {
  const allowed = TASK_ACTIONS[action];
  if (!allowed.includes(status)) {
    throw DomainError.conflict(`task ${phaseId}/${taskId} is ${status}; ${action} is allowed only when it is ${allowed.join(' or ')}`);
  }
}

/** Whether the table has the move; staying put is always allowed. */
export function canMoveRun(from: RunStatus, to: RunStatus): boolean {
  return from === to || RUN_MOVES[from].includes(to);
}

export function canMoveTask(from: TaskStatus, to: TaskStatus): boolean {
  return from === to || TASK_MOVES[from].includes(to);
}

/** A phase's status follows from its tasks'. */
export function phaseStatusOf(tasks: readonly { status: TaskStatus }[]): PhaseStatus {
  if (tasks.every((task) => task.status === 'skipped')) return 'skipped';
  if (tasks.every((task) => DONE_TASK_STATUSES.includes(task.status))) return 'succeeded';
  if (tasks.some((task) => task.status === 'cancelled')) return 'cancelled';
  if (tasks.some((task) => task.status === 'failed')) return 'failed';
  if (tasks.every((task) => task.status === 'pending')) return 'pending';
  return 'running';
}
