import * as z from 'zod';
import { pageQueryFields } from '../input/page-query';
import { modelChoiceSchema } from '../workspaces/workspace-config';
import { processSpecSchema, TASK_TYPES } from './process-spec';
import { PHASE_STATUSES, RUN_STATUSES, TASK_STATUSES } from './process-transitions';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

/** The body of `POST …/processes/{processId}/runs` (docs/api.md#process-runs). */
export const createProcessRunSchema = lazySchema(() =>
  z
    .object({
      spec: processSpecSchema,
      inputs: z.record(z.string(), z.unknown()).default({}),
      metadata: z.record(z.string(), z.unknown()).default({}),
      instructions: z.string().max(100_000).default(''),
      model: modelChoiceSchema.optional().describe('the model of prompt tasks, before the task’s own and the workspace default'),
    })
    .meta({ id: 'CreateProcessRun' }),
);
export type CreateProcessRunInput = z.input<typeof createProcessRunSchema>;

/** The body of `approve`: every field optional (`{}` approves every waiting approval). */
export const approveSchema = lazySchema(() =>
  z
    .object({
      phaseId: z.string().max(100).optional(),
      taskId: z.string().max(100).optional(),
      decision: z.enum(['approve', 'reject']).default('approve'),
      comment: z.string().max(10_000).optional(),
    })
    .meta({ id: 'ProcessApproval' }),
);
export type ApproveInput = z.input<typeof approveSchema>;

/** A process id: a name in URLs. */
export const processIdSchema = lazySchema(() => z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$/, 'a process id is 1-200 letters, digits, _, . or -'));

const taskErrorSchema = lazySchema(() => z.object({ code: z.string(), message: z.string() }));

export const processTaskSchema = lazySchema(() =>
  z
    .object({
      id: z.string(),
      name: z.string(),
      type: z.enum(TASK_TYPES),
      status: z.enum(TASK_STATUSES),
      attempts: z.number().int(),
      output: z.unknown(),
      error: taskErrorSchema.nullable(),
      started_at: z.string().nullable(),
      completed_at: z.string().nullable(),
    })
    .meta({ id: 'ProcessTask' }),
);

export const processRunSchema = lazySchema(() =>
  z
    .object({
      id: z.string(),
      process_id: z.string(),
      workspace_id: z.string(),
      status: z.enum(RUN_STATUSES),
      spec: processSpecSchema,
      inputs: z.record(z.string(), z.unknown()),
      metadata: z.record(z.string(), z.unknown()),
      instructions: z.string(),
      phases: z.array(z.object({ id: z.string(), name: z.string(), status: z.enum(PHASE_STATUSES), tasks: z.array(processTaskSchema) })),
      created_at: z.string(),
      started_at: z.string().nullable(),
      completed_at: z.string().nullable(),
    })
    .meta({ id: 'ProcessRun' }),
);

export const processLogEntrySchema = lazySchema(() =>
  z
    .object({
      seq: z.number().int(),
      at: z.string(),
      type: z.enum(['transition', 'output']),
      phase_id: z.string().nullable(),
      task_id: z.string().nullable(),
      message: z.string(),
    })
    .meta({ id: 'ProcessLogEntry' }),
);

export const processRunsParams = lazySchema(() => z.object({ workspaceId: z.string().max(200), processId: processIdSchema }));
/** The path parameters naming a process run, which a task's add to. */
const processRunPathFields = lazy(() => ({ workspaceId: z.string().max(200), runId: z.string().max(200) }));
export const processRunParams = lazySchema(() => z.object(processRunPathFields()));
export const processTaskParams = lazySchema(() =>
  z.object({ ...processRunPathFields(), phaseId: z.string().max(100), taskId: z.string().max(100) }),
);
export const processRunsQuery = lazySchema(() => z.object(pageQueryFields()));

export const processRunAnswer = lazySchema(() => z.object({ data: processRunSchema }));
export const processRunAction = lazySchema(() => z.object({ message: z.string(), data: processRunSchema }));
