import { z } from 'zod';
import { pageQueryFields } from '../input/page-query';
import { processSpecSchema, TASK_TYPES } from './process-spec';
import { processIdSchema } from './process-run-service';
import { PHASE_STATUSES, RUN_STATUSES, TASK_STATUSES } from './process-transitions';

/** Schemas of the process run routes' answers and parameters, for the router and the OpenAPI document. */
const taskErrorSchema = z.object({ code: z.string(), message: z.string() });

export const processTaskSchema = z
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
  .meta({ id: 'ProcessTask' });

export const processRunSchema = z
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
  .meta({ id: 'ProcessRun' });

export const processLogEntrySchema = z
  .object({
    seq: z.number().int(),
    at: z.string(),
    type: z.enum(['transition', 'output']),
    phase_id: z.string().nullable(),
    task_id: z.string().nullable(),
    message: z.string(),
  })
  .meta({ id: 'ProcessLogEntry' });

export const processRunsParams = z.object({ workspaceId: z.string().max(200), processId: processIdSchema });
export const processRunParams = z.object({ workspaceId: z.string().max(200), runId: z.string().max(200) });
export const processTaskParams = processRunParams.extend({ phaseId: z.string().max(100), taskId: z.string().max(100) });
export const processRunsQuery = z.object(pageQueryFields);

export const processRunAnswer = z.object({ data: processRunSchema });
export const processRunAction = z.object({ message: z.string(), data: processRunSchema });
