import * as z from 'zod';
import { apiErrorBody } from '../../http/error-schema';
import { route, type RouteDefinition } from '../../http/route';
import { openSseStream, type SseSettings } from '../../http/sse';
import type { Clock } from '../../ports/clock';
import type { ProcessRunService } from './process-run-service';
import {
  approveSchema,
  createProcessRunSchema,
  processLogEntrySchema,
  processRunAction,
  processRunAnswer,
  processRunParams,
  processRunSchema,
  processRunsParams,
  processRunsQuery,
  processTaskParams,
} from './process-schemas';
import type { WorkspaceEvent } from '../workspace-events/workspace-events';
import { FINAL_RUN_STATUSES, type RunStatus } from './process-transitions';
import { lazySchema } from '../lazy-schema';

const TAG = 'process runs';
const invalid = { description: 'invalid input: details say what to fix', schema: apiErrorBody };
const notFound = { description: 'no such workspace, process run or task in the account', schema: apiErrorBody };
const conflict = { description: 'the current state does not allow this action; the message names it', schema: apiErrorBody };
const BASE = '/workspace/{workspaceId}/processes/runs/{runId}';

/** The process run routes (docs/api.md#process-runs). */
export function processRoutes(processes: ProcessRunService, clock: Clock, sse: SseSettings): RouteDefinition[] {
  const action = (name: 'start' | 'pause' | 'resume' | 'cancel', summary: string) =>
    route({
      method: 'POST',
      path: `${BASE}/${name}`,
      tag: TAG,
      summary,
      params: processRunParams,
      responses: { 200: { description: 'what happened, and the run', schema: processRunAction }, 404: notFound, 409: conflict },
      handle: async ({ principal, params }) => ({ status: 200, body: await processes.act(principal.accountId, params.workspaceId, params.runId, name) }),
    });
  const taskAction = (name: 'retry' | 'skip', summary: string) =>
    route({
      method: 'POST',
      path: `${BASE}/tasks/{phaseId}/{taskId}/${name}`,
      tag: TAG,
      summary,
      params: processTaskParams,
      responses: { 200: { description: 'what happened, and the run', schema: processRunAction }, 404: notFound, 409: conflict },
      handle: async ({ principal, params }) => {
        const { workspaceId, runId, phaseId, taskId } = params;
        const answer =
          name === 'retry'
            ? await processes.retryTask(principal.accountId, workspaceId, runId, phaseId, taskId)
            : await processes.skipTask(principal.accountId, workspaceId, runId, phaseId, taskId);
        return { status: 200, body: answer };
      },
    });
  return [
    route({
      method: 'POST',
      path: '/workspace/{workspaceId}/processes/{processId}/runs',
      tag: TAG,
      summary: 'Create a process run from a spec; it waits in status created until started',
      params: processRunsParams,
      body: { json: createProcessRunSchema },
      responses: {
        201: { description: 'the new run', schema: processRunAnswer },
        400: invalid,
        404: notFound,
        409: { description: 'the workspace is archived', schema: apiErrorBody },
      },
      handle: async ({ principal, params, body }) => ({
        status: 201,
        body: { data: await processes.create(principal.accountId, params.workspaceId, params.processId, body) },
      }),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/processes/{processId}/runs',
      tag: TAG,
      summary: "The process's runs in the workspace, newest first",
      params: processRunsParams,
      query: processRunsQuery,
      responses: { 200: { description: 'the runs', schema: lazySchema(() => z.object({ data: z.array(processRunSchema) })) }, 400: invalid, 404: notFound },
      handle: async ({ principal, params, query }) => ({
        status: 200,
        body: { data: await processes.list(principal.accountId, params.workspaceId, params.processId, query) },
      }),
    }),
    route({
      method: 'GET',
      path: BASE,
      tag: TAG,
      summary: 'Read a process run: its status, phases and tasks',
      params: processRunParams,
      responses: { 200: { description: 'the run', schema: processRunAnswer }, 404: notFound },
      handle: async ({ principal, params }) => ({ status: 200, body: { data: await processes.get(principal.accountId, params.workspaceId, params.runId) } }),
    }),
    action('start', 'Start a created run'),
    action('pause', 'Pause a running run: running tasks finish, no task starts until resume'),
    action('resume', 'Resume a paused run'),
    action('cancel', 'Cancel a run: running tasks are aborted, the others cancelled'),
    route({
      method: 'POST',
      path: `${BASE}/approve`,
      tag: TAG,
      summary: 'Decide a waiting approval (phaseId and taskId name it; {} approves every waiting one)',
      params: processRunParams,
      body: { json: approveSchema, optional: true },
      responses: { 200: { description: 'what was decided, and the run', schema: processRunAction }, 400: invalid, 404: notFound, 409: conflict },
      handle: async ({ principal, params, body }) => ({ status: 200, body: await processes.approve(principal.accountId, params.workspaceId, params.runId, body) }),
    }),
    taskAction('retry', 'Run a failed task again (a pending one at once); a failed run goes on'),
    taskAction('skip', 'Skip a failed or pending task: tasks that need it may start'),
    route({
      method: 'GET',
      path: `${BASE}/logs`,
      tag: TAG,
      summary: "The run's log: every transition and the tasks' output lines, oldest first",
      params: processRunParams,
      responses: { 200: { description: 'the log', schema: lazySchema(() => z.object({ data: z.array(processLogEntrySchema) })) }, 404: notFound },
      handle: async ({ principal, params }) => ({ status: 200, body: { data: await processes.logs(principal.accountId, params.workspaceId, params.runId) } }),
    }),
    route({
      method: 'GET',
      path: `${BASE}/events`,
      tag: TAG,
      summary: 'Server-sent events: the run now (process.run.updated), then task.updated and process.run.updated as they happen; ends when the run is succeeded or cancelled',
      params: processRunParams,
      responses: { 200: { description: 'an event stream', contentType: 'text/event-stream' }, 404: notFound },
      handle: async ({ principal, params, signal }) => {
        const { workspaceId, runId } = params;
        // Changes that land while the history is read wait here, in order, until the stream opens.
        const pending: WorkspaceEvent[] = [];
        let deliver = (event: WorkspaceEvent): void => void pending.push(event);
        const { run, subscription } = await processes.follow(principal.accountId, workspaceId, runId, (event) => deliver(event));
        const history = await processes.logs(principal.accountId, workspaceId, runId).catch((error: unknown) => {
          subscription.unsubscribe();
          throw error;
        });
        const stream = openSseStream({ ...sse, clock, signal, onClose: () => subscription.unsubscribe() });
        let id = 0;
        const send = (event: WorkspaceEvent): void => {
          stream.send({ event: event.type, id: ++id, data: JSON.stringify(event) });
          if (event.type === 'process.run.updated' && FINAL_RUN_STATUSES.includes(event.status as RunStatus)) stream.end();
        };
        for (const entry of history) send({ type: 'log', run_id: runId, entry });
        send({ type: 'process.run.updated', run_id: run.id, process_id: run.process_id, status: run.status, run });
        for (const event of pending) send(event);
        deliver = send;
        return stream.response;
      },
    }),
  ];
}
