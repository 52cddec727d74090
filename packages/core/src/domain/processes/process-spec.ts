import * as z from 'zod';
import { DomainError, type ErrorDetail, validationError } from '../errors';
import { executeArgsSchema } from '../commands/command-schemas';
import { runResourcesSchema } from '../runs/run-schemas';
import { modelChoiceSchema } from '../workspaces/workspace-config';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

/** Ids of phases and tasks: they appear in URLs (`tasks/{phaseId}/{taskId}/retry`), so URL-safe. */
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
const idSchema = lazy(() => z.string().regex(ID_PATTERN, 'must be 1-100 letters, digits, _, . or -, starting with a letter or digit'));
const nameSchema = lazy(() => z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters'));

export const TASK_TYPES = ['prompt', 'command', 'runnable', 'approval', 'wait'] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export type ModelChoiceInput = z.infer<typeof modelChoiceSchema>;

/** Longest durable wait or timeout: a year. */
const MAX_SECONDS = 366 * 24 * 3600;
const seconds = (what: string) => z.number().min(0, `${what} must be at least 0`).max(MAX_SECONDS, `${what} must be at most ${MAX_SECONDS}`);

/**
 * A task's retry policy: `max_attempts` counts the first attempt; the delay before attempt n+1 is
 * `initial_interval_seconds · backoff_coefficient^(n-1)`, capped at `maximum_interval_seconds`.
 * `backoff_seconds` is read as `initial_interval_seconds` (the short form of docs/api.md#process-runs).
 */
export const retryPolicySchema = lazySchema(() =>
  z
    .object({
      max_attempts: z.number().int('max_attempts must be an integer').min(1, 'max_attempts must be at least 1').max(100, 'max_attempts must be at most 100'),
      initial_interval_seconds: seconds('initial_interval_seconds').optional(),
      backoff_seconds: seconds('backoff_seconds').optional(),
      backoff_coefficient: z.number().min(1, 'backoff_coefficient must be at least 1').max(100, 'backoff_coefficient must be at most 100').default(2),
      maximum_interval_seconds: seconds('maximum_interval_seconds').optional(),
    })
    .transform(({ backoff_seconds, initial_interval_seconds, ...rest }) => ({
      ...rest,
      initial_interval_seconds: initial_interval_seconds ?? backoff_seconds ?? 1,
    })),
);
export type RetryPolicy = z.output<typeof retryPolicySchema>;

const inputSchemas = lazy(() => ({
  prompt: z.object({ prompt: z.string().min(1, 'prompt must not be empty').max(100_000) }),
  command: z.object({ trigger: z.string().min(1).max(200), args: executeArgsSchema() }),
  runnable: z.object({ runnable_id: z.string().min(1).max(200), resources: runResourcesSchema() }),
  wait: z.object({ seconds: seconds('seconds') }),
  approval: z.object({
    message: z.string().max(10_000).default(''),
    timeout_seconds: seconds('timeout_seconds').optional(),
    timeout_outcome: z.enum(['reject', 'approve']).default('reject'),
  }),
}) satisfies Record<TaskType, z.ZodType>);

export type TaskInputs = { [T in TaskType]: z.output<ReturnType<typeof inputSchemas>[T]> };

const taskSchema = lazySchema(() =>
  z.object({
    id: idSchema(),
    name: nameSchema(),
    type: z.enum(TASK_TYPES, `must be one of ${TASK_TYPES.join(', ')}`),
    needs: z.array(idSchema()).max(200).default([]),
    retry: retryPolicySchema.optional(),
    timeout_seconds: seconds('timeout_seconds').optional(),
    input: z.record(z.string(), z.unknown()).optional(),
    model: modelChoiceSchema.optional(),
  }),
);

/** A process specification as clients write it (docs/api.md#process-runs). */
export const processSpecSchema = lazySchema(() =>
  z
    .object({
      name: nameSchema(),
      phases: z
        .array(z.object({ id: idSchema(), name: nameSchema(), tasks: z.array(taskSchema).min(1, 'a phase needs at least one task').max(200) }))
        .min(1, 'a process needs at least one phase')
        .max(100),
    })
    .meta({
      id: 'ProcessSpec',
      examples: [
        {
          name: 'release',
          phases: [
            {
              id: 'prepare',
              name: 'Prepare',
              tasks: [
                { id: 'cool-down', name: 'Cool down', type: 'wait', input: { seconds: 0 } },
                { id: 'sign-off', name: 'Sign off', type: 'approval', needs: ['cool-down'], input: { message: 'Ship it?', timeout_seconds: 3600 } },
              ],
            },
          ],
        },
      ],
    }),
);

export interface TaskSpec<T extends TaskType = TaskType> {
  id: string;
  name: string;
  type: T;
  needs: string[];
  retry?: RetryPolicy;
  timeout_seconds?: number;
  input: TaskInputs[T];
  model?: ModelChoiceInput;
}

export interface PhaseSpec {
  id: string;
  name: string;
  tasks: TaskSpec[];
}

export interface ProcessSpec {
  name: string;
  phases: PhaseSpec[];
}

/**
 * Parses a spec: shape and types (zod, with paths), each task's `input` by its type, then what a
 * schema cannot say: unique phase ids, unique task ids within a phase, `needs` naming tasks of the
 * same phase, and no cycle in `needs` (the cycle is named). Refusals are VALIDATION_FAILED with
 * one detail per problem, paths rooted at `spec`.
 */
export function parseProcessSpec(raw: unknown): ProcessSpec {
  const parsed = processSpecSchema.safeParse(raw);
  if (!parsed.success) throw prefixed(validationError(parsed.error), 'spec');
  const problems: ErrorDetail[] = [];
  const phaseIds = new Set<string>();
  const phases: PhaseSpec[] = parsed.data.phases.map((phase, p) => {
    const at = `spec.phases.${p}`;
    if (phaseIds.has(phase.id)) problems.push({ path: `${at}.id`, message: `duplicate phase id '${phase.id}'` });
    phaseIds.add(phase.id);
    const taskIds = new Set<string>();
    for (const [t, task] of phase.tasks.entries()) {
      if (taskIds.has(task.id)) problems.push({ path: `${at}.tasks.${t}.id`, message: `duplicate task id '${task.id}' in phase '${phase.id}'` });
      taskIds.add(task.id);
    }
    const tasks = phase.tasks.map((task, t): TaskSpec => {
      for (const [n, need] of task.needs.entries()) {
        if (!taskIds.has(need)) problems.push({ path: `${at}.tasks.${t}.needs.${n}`, message: `task '${task.id}' needs '${need}', which is not a task of phase '${phase.id}'` });
        if (need === task.id) problems.push({ path: `${at}.tasks.${t}.needs.${n}`, message: `task '${task.id}' needs itself` });
      }
      const input = inputSchemas()[task.type].safeParse(task.input ?? {});
      if (!input.success) {
        for (const issue of input.error.issues) {
          problems.push({ path: [`${at}.tasks.${t}.input`, ...issue.path.map(String)].join('.'), message: `${task.type} task: ${issue.message}` });
        }
      }
      return { ...task, input: input.data } as TaskSpec;
    });
    const cycle = problems.length === 0 ? findCycle(tasks) : undefined;
    if (cycle) problems.push({ path: `${at}.tasks`, message: `tasks of phase '${phase.id}' need each other in a cycle: ${cycle.join(' → ')}` });
    return { id: phase.id, name: phase.name, tasks };
  });
  if (problems.length > 0) throw DomainError.invalid(`invalid spec: ${problems[0]!.path}: ${problems[0]!.message}`, problems);
  return { name: parsed.data.name, phases };
}

/** A cycle of `needs` as the ids along it, first id repeated at the end; undefined when there is none. */
function findCycle(tasks: readonly TaskSpec[]): string[] | undefined {
  const needs = new Map(tasks.map((task) => [task.id, task.needs]));
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | undefined => {
    if (state.get(id) === 'done') return undefined;
    if (state.get(id) === 'visiting') return [...path.slice(path.indexOf(id)), id];
    state.set(id, 'visiting');
    path.push(id);
    for (const need of needs.get(id) ?? []) {
      const cycle = visit(need);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const task of tasks) {
    const cycle = visit(task.id);
    if (cycle) return cycle;
  }
  return undefined;
}

/** The same refusal with its detail paths (and summary) under `root`. */
function prefixed(error: DomainError, root: string): DomainError {
  const details = (error.details ?? []).map((detail) => ({ ...detail, path: detail.path ? `${root}.${detail.path}` : root }));
  const first = details[0];
  return DomainError.invalid(`invalid spec: ${first ? `${first.path}: ${first.message}` : 'invalid'}`, details);
}
