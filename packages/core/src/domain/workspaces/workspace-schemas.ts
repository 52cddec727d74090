import * as z from 'zod';
import { TOO_DEEP_MESSAGE, withinDepthLimit } from '../input/json-depth';
import { LIFECYCLE_EVENTS } from './workspace-lifecycle';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

/**
 * The HTTP shapes of workspaces (docs/api.md#workspaces): records, request bodies, and the
 * envelopes every workspace route answers in — reads `{data}`, changes `{message, data}`; errors are
 * the router's `{error, code, details?}`.
 */

/** `{data}`: what a workspace route answers to a read. */
export function dataEnvelope<T extends z.ZodType>(data: T) {
  return lazySchema(() => z.object({ data }));
}

/** `{message, data}`: what a workspace route answers to a change. */
export function changeEnvelope<T extends z.ZodType>(data: T) {
  return lazySchema(() => z.object({ message: z.string().describe('what was done, for people'), data }));
}

const workspaceName = lazy(() => z.string().trim().min(1, 'name must not be empty').max(200, 'name must be at most 200 characters'));
const workspaceDescription = lazy(() => z.string().max(2000, 'description must be at most 2000 characters'));
const workspaceMetadata = lazySchema(() =>
  z
    .record(z.string(), z.unknown(), { error: 'metadata must be a JSON object' })
    .refine(withinDepthLimit, TOO_DEEP_MESSAGE)
    .describe('free-form JSON the client keeps with the workspace'),
);

export const workspaceSchema = lazySchema(() =>
  z
    .object({
      id: z.uuid(),
      account_id: z.string(),
      name: z.string(),
      description: z.string().nullable(),
      template_id: z.uuid().nullable().describe('the template the workspace started from'),
      status: z.enum(['active', 'archived']).describe('archived workspaces refuse changes (409)'),
      metadata: z.record(z.string(), z.unknown()),
      deleted_at: z.string().nullable().describe("set by the lifecycle event 'deleted', cleared by 'restored'"),
      created_at: z.string(),
      updated_at: z.string(),
    })
    .meta({ id: 'Workspace' }),
);

export const createWorkspaceBody = lazySchema(() =>
  z
    .object({
      name: workspaceName(),
      description: workspaceDescription().nullish(),
      template_id: z.uuid('template_id must be the id of one of your workspace templates').nullish(),
      metadata: workspaceMetadata.optional(),
    })
    .meta({ id: 'WorkspaceCreate', examples: [{ name: 'research notes', description: 'papers and summaries' }] }),
);

export const updateWorkspaceBody = lazySchema(() =>
  z
    .object({
      name: workspaceName().optional(),
      description: workspaceDescription().nullish().describe('null clears it'),
      metadata: workspaceMetadata.optional().describe('replaces the metadata whole'),
    })
    .meta({ id: 'WorkspaceUpdate', examples: [{ description: 'papers, summaries and drafts' }] }),
);

export const workspaceMetadataSchema = lazySchema(() =>
  z
    .object({
      file_count: z.int().describe('files in the workspace (see files_truncated)'),
      total_bytes: z.int().describe('bytes of those files'),
      files_truncated: z.boolean().describe('the count stopped at its bound (100,000 entries, depth 64): the counts are lower bounds'),
      thread_count: z.int(),
      command_count: z.int(),
      process_runs: z.record(z.string(), z.int()).describe('process runs by status'),
      last_activity_at: z.string().describe('the latest change: the record, a lifecycle event, a file, a thread, a command, a process run'),
    })
    .meta({ id: 'WorkspaceMetadata' }),
);

export const lifecycleEventSchema = lazySchema(() =>
  z
    .object({
      id: z.uuid(),
      event: z.enum(LIFECYCLE_EVENTS),
      notes: z.string().nullable(),
      created_by: z.string().describe('the client that recorded it'),
      created_at: z.string(),
    })
    .meta({ id: 'LifecycleEvent' }),
);

export const createLifecycleEventBody = lazySchema(() =>
  z
    .object({
      event: z.enum(LIFECYCLE_EVENTS, { error: `event must be one of ${LIFECYCLE_EVENTS.join(', ')}` }),
      notes: z.string().max(10_000, 'notes must be at most 10000 characters').nullish(),
    })
    .meta({ id: 'LifecycleEventCreate', examples: [{ event: 'archived', notes: 'project finished' }] }),
);

export const workspaceParams = lazySchema(() => z.object({ workspaceId: z.uuid() }));
