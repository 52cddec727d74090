import type { ProcessLogEntry, ProcessRunRecord, StoredPhase, StoredTask } from './process-run-record';
import type { ProcessSpec, TaskSpec } from './process-spec';
import { canMoveRun, canMoveTask, DONE_TASK_STATUSES, phaseStatusOf, type RunStatus, type TaskStatus } from './process-transitions';

/** A job a transition asks for once it is durable. */
export interface JobRequest {
  kind: string;
  key: string;
  payload: unknown;
  /** Epoch ms; now when absent. */
  runAt?: number;
}

/** Where a task is in its run. */
export interface TaskRef {
  phase: StoredPhase;
  task: StoredTask;
  spec: TaskSpec;
}

/** Longest line of task output kept in the log, and most lines per output. */
const MAX_LOG_LINE = 2000;
const MAX_OUTPUT_LINES = 200;

/**
 * One transition of a run being prepared: a copy of the stored run changed only through
 * `moveRun`/`moveTask` (which hold to process-transitions.ts), plus what the transition logs, the
 * tasks it changed (for `task.updated`) and the jobs it needs. Nothing happens until the engine has
 * written it.
 */
export class RunDraft {
  readonly logs: Omit<ProcessLogEntry, 'seq' | 'at'>[] = [];
  readonly jobs: JobRequest[] = [];
  readonly changedTasks = new Set<StoredTask>();
  changed = false;
  /** The run was cancelled: its running tasks are to be aborted. */
  cancelled = false;
  readonly nowMs: number;

  constructor(
    readonly run: ProcessRunRecord,
    readonly now: Date,
  ) {
    this.nowMs = now.getTime();
  }

  get spec(): ProcessSpec {
    return this.run.spec;
  }

  /** The task, or undefined when the run has no such phase or task. */
  find(phaseId: string, taskId: string): TaskRef | undefined {
    const p = this.run.phases.findIndex((phase) => phase.id === phaseId);
    const phase = this.run.phases[p];
    const t = phase?.tasks.findIndex((task) => task.id === taskId) ?? -1;
    if (!phase || t < 0) return undefined;
    return { phase, task: phase.tasks[t]!, spec: this.spec.phases[p]!.tasks[t]! };
  }

  *tasks(): Generator<TaskRef> {
    for (const [p, phase] of this.run.phases.entries()) {
      for (const [t, task] of phase.tasks.entries()) yield { phase, task, spec: this.spec.phases[p]!.tasks[t]! };
    }
  }

  moveRun(to: RunStatus): void {
    const from = this.run.status;
    if (from === to) return;
    if (!canMoveRun(from, to)) throw new Error(`process run ${this.run.id}: no move ${from} → ${to} in the transition table`);
    this.run.status = to;
    this.run.completed_at = to === 'succeeded' || to === 'failed' || to === 'cancelled' ? this.now.toISOString() : null;
    if (to === 'running' && this.run.started_at === null) this.run.started_at = this.now.toISOString();
    this.changed = true;
    this.logs.push({ type: 'transition', phase_id: null, task_id: null, message: `run ${from} → ${to}` });
  }

  moveTask(ref: TaskRef, to: TaskStatus, fields: Partial<Pick<StoredTask, 'output' | 'error'>> = {}, note = ''): void {
    const { phase, task } = ref;
    const from = task.status;
    if (!canMoveTask(from, to)) throw new Error(`task ${phase.id}/${task.id}: no move ${from} → ${to} in the transition table`);
    Object.assign(task, fields);
    task.status = to;
    if (to === 'succeeded' || to === 'failed' || to === 'skipped' || to === 'cancelled') task.completed_at = this.now.toISOString();
    this.touch(task);
    this.logs.push({ type: 'transition', phase_id: phase.id, task_id: task.id, message: `task ${from} → ${to}${note ? `: ${note}` : ''}` });
  }

  /** Records a change of a task beside its status (its engine state, a new attempt). */
  touch(task: StoredTask): void {
    this.changed = true;
    this.changedTasks.add(task);
  }

  /** The lines of a task's output, into the log. */
  logOutput(ref: TaskRef, lines: readonly string[]): void {
    for (const line of lines.slice(0, MAX_OUTPUT_LINES)) {
      this.logs.push({ type: 'output', phase_id: ref.phase.id, task_id: ref.task.id, message: line.slice(0, MAX_LOG_LINE) });
    }
  }

  job(request: JobRequest): void {
    this.jobs.push(request);
  }

  /** Each phase's status from its tasks' (process-transitions.ts). */
  refreshPhases(): void {
    for (const phase of this.run.phases) phase.status = phaseStatusOf(phase.tasks);
  }

  /** Whether every task a task needs has succeeded or been skipped. */
  needsMet(ref: TaskRef): boolean {
    return ref.spec.needs.every((need) => DONE_TASK_STATUSES.includes(this.find(ref.phase.id, need)!.task.status));
  }
}
