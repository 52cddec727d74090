import * as z from 'zod';
import { apiErrorBody } from '../../http/error-schema';
import { route, type RouteDefinition } from '../../http/route';
import { openSseStream, type SseSettings } from '../../http/sse';
import type { Clock } from '../../ports/clock';
import type { CommandExecutionService, ExecutionEvent } from './command-execution-service';
import {
  categorySchema,
  commandSchema,
  createCommandSchema,
  executeCommandSchema,
  executionSchema,
  EXECUTION_STATUSES,
  listCommandsQuery,
  patchCommandSchema,
  scoredCommandSchema,
  searchQuery,
  suggestionsQuery,
  triggerSchema,
  usageQuery,
} from './command-schemas';
import type { CommandService } from './command-service';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

export interface CommandRoutesDeps {
  commands: CommandService;
  executions: CommandExecutionService;
  clock: Clock;
  sse: SseSettings;
}

const TAG = 'commands';
const noWorkspace = { description: 'no such workspace in the account', schema: apiErrorBody };
const noCommand = { description: 'no such workspace, or no command with this trigger in it', schema: apiErrorBody };
const noExecution = { description: 'no such workspace, command or execution', schema: apiErrorBody };
const archived = { description: 'the workspace is archived', schema: apiErrorBody };

/** The path parameters naming a workspace, and a command in it, that the other routes' add to. */
const workspacePathFields = lazy(() => ({ workspaceId: z.uuid().describe('workspace id') }));
const commandPathFields = lazy(() => ({ ...workspacePathFields(), trigger: triggerSchema() }));
const workspaceParams = lazySchema(() => z.object(workspacePathFields()));
const commandParams = lazySchema(() => z.object(commandPathFields()));
const categoryParams = lazySchema(() => z.object({ ...workspacePathFields(), category: categorySchema().describe('a category') }));
const executionParams = lazySchema(() =>
  z.object({ ...commandPathFields(), runId: z.uuid().describe('execution id (the runId execute answered)') }),
);

const data = <T extends z.ZodType>(schema: T) => lazySchema(() => z.object({ data: schema }));
const commandList = lazySchema(() => data(z.array(commandSchema)));
const changed = (schema: z.ZodType) => lazySchema(() => z.object({ message: z.string(), data: schema }));

/** The command routes of a workspace (docs/api.md#commands). */
export function commandRoutes({ commands, executions, clock, sse }: CommandRoutesDeps): RouteDefinition[] {
  return [
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/commands',
      tag: TAG,
      summary: 'List the commands of a workspace by trigger, filtered by type and by a search text',
      params: workspaceParams,
      query: listCommandsQuery,
      responses: { 200: { description: 'a page of commands', schema: commandList }, 404: noWorkspace },
      handle: async ({ principal, params, query }) => ({ status: 200, body: { data: await commands.list(principal.accountId, params.workspaceId, query) } }),
    }),
    route({
      method: 'POST',
      path: '/workspace/{workspaceId}/commands',
      tag: TAG,
      summary: 'Create a command (stored as .runloom/commands/<trigger>.yaml in the workspace)',
      params: workspaceParams,
      body: { json: createCommandSchema },
      responses: {
        201: { description: 'the command', schema: changed(commandSchema) },
        404: noWorkspace,
        409: { description: 'a command with this trigger exists, or the workspace is archived', schema: apiErrorBody },
      },
      handle: async ({ principal, params, body }) => ({
        status: 201,
        body: { message: `command '${body.trigger}' created`, data: await commands.create(principal.accountId, params.workspaceId, body) },
      }),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/commands/suggestions',
      tag: TAG,
      summary: 'Autocomplete: commands whose trigger or name match the query by prefix or with a typo, best first',
      params: workspaceParams,
      query: suggestionsQuery,
      responses: { 200: { description: 'the suggestions', schema: commandList }, 404: noWorkspace },
      handle: async ({ principal, params, query }) => ({
        status: 200,
        body: { data: await commands.suggestions(principal.accountId, params.workspaceId, query.query, query.limit) },
      }),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/commands/search',
      tag: TAG,
      summary: 'Full-text search over trigger, name, description and template, ranked',
      params: workspaceParams,
      query: searchQuery,
      responses: {
        200: { description: 'a page of results and how many there are', schema: lazySchema(() => data(z.object({ results: z.array(scoredCommandSchema), total: z.int() }))) },
        404: noWorkspace,
      },
      handle: async ({ principal, params, query }) => ({
        status: 200,
        body: { data: await commands.search(principal.accountId, params.workspaceId, query.query, query) },
      }),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/commands/categories',
      tag: TAG,
      summary: 'The categories of the workspace’s commands, each with its number of commands',
      params: workspaceParams,
      responses: { 200: { description: 'category → number of commands', schema: lazySchema(() => data(z.record(z.string(), z.int()))) }, 404: noWorkspace },
      handle: async ({ principal, params }) => ({ status: 200, body: { data: await commands.categories(principal.accountId, params.workspaceId) } }),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/commands/categories/{category}',
      tag: TAG,
      summary: 'The commands of one category, by trigger',
      params: categoryParams,
      responses: { 200: { description: 'the commands (none for an unknown category)', schema: commandList }, 404: noWorkspace },
      handle: async ({ principal, params }) => ({ status: 200, body: { data: await commands.inCategory(principal.accountId, params.workspaceId, params.category) } }),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/commands/recent',
      tag: TAG,
      summary: 'Commands executed at least once, last executed first',
      params: workspaceParams,
      query: usageQuery,
      responses: { 200: { description: 'the commands', schema: commandList }, 404: noWorkspace },
      handle: async ({ principal, params, query }) => ({ status: 200, body: { data: await commands.recent(principal.accountId, params.workspaceId, query.limit) } }),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/commands/popular',
      tag: TAG,
      summary: 'Commands executed at least once, most executed first',
      params: workspaceParams,
      query: usageQuery,
      responses: { 200: { description: 'the commands', schema: commandList }, 404: noWorkspace },
      handle: async ({ principal, params, query }) => ({ status: 200, body: { data: await commands.popular(principal.accountId, params.workspaceId, query.limit) } }),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/command/{trigger}',
      tag: TAG,
      summary: 'Read a command, with its usage',
      params: commandParams,
      responses: { 200: { description: 'the command', schema: data(commandSchema) }, 404: noCommand },
      handle: async ({ principal, params }) => ({ status: 200, body: { data: await commands.get(principal.accountId, params.workspaceId, params.trigger) } }),
    }),
    route({
      method: 'PATCH',
      path: '/workspace/{workspaceId}/command/{trigger}',
      tag: TAG,
      summary: 'Change fields of a command (null removes an optional one); the result is checked as a whole',
      params: commandParams,
      body: { json: patchCommandSchema },
      responses: { 200: { description: 'the command', schema: changed(commandSchema) }, 404: noCommand, 409: archived },
      handle: async ({ principal, params, body }) => ({
        status: 200,
        body: { message: `command '${params.trigger}' updated`, data: await commands.patch(principal.accountId, params.workspaceId, params.trigger, body) },
      }),
    }),
    route({
      method: 'DELETE',
      path: '/workspace/{workspaceId}/command/{trigger}',
      tag: TAG,
      summary: 'Delete a command (its file and its index entry; its executions stay readable)',
      params: commandParams,
      responses: { 200: { description: 'deleted', schema: lazySchema(() => z.object({ message: z.string() })) }, 404: noCommand, 409: archived },
      handle: async ({ principal, params }) => {
        await commands.delete(principal.accountId, params.workspaceId, params.trigger);
        return { status: 200, body: { message: `command '${params.trigger}' deleted` } };
      },
    }),
    route({
      method: 'POST',
      path: '/workspace/{workspaceId}/command/{trigger}/execute',
      tag: TAG,
      summary: 'Execute a command with positional args; answers at once with the execution id (runId) and its status',
      params: commandParams,
      body: { json: executeCommandSchema, optional: true },
      responses: {
        200: { description: 'the execution is queued', schema: lazySchema(() => data(z.object({ runId: z.string(), status: z.enum(EXECUTION_STATUSES) }))) },
        400: { description: 'invalid input, a prompt without a model, or a process that never ran in the workspace: the message says what to fix', schema: apiErrorBody },
        403: { description: 'a shell command, and shell commands are disabled on this server (the message says how to enable them)', schema: apiErrorBody },
        404: { description: 'no such workspace, command or thread', schema: apiErrorBody },
        409: archived,
      },
      handle: async ({ principal, params, body }) => ({
        status: 200,
        body: { data: await executions.execute(principal.accountId, params.workspaceId, params.trigger, body) },
      }),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/command/{trigger}/executions/{runId}',
      tag: TAG,
      summary: 'Read an execution: status, output so far, exit code, error',
      params: executionParams,
      responses: { 200: { description: 'the execution', schema: data(executionSchema) }, 404: noExecution },
      handle: async ({ principal, params }) => ({
        status: 200,
        body: { data: await executions.get(principal.accountId, params.workspaceId, params.trigger, params.runId) },
      }),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/command/{trigger}/executions/{runId}/output',
      tag: TAG,
      summary: 'The output as plain text: streamed as it comes while the execution runs, whole once it has finished',
      params: executionParams,
      responses: { 200: { description: 'the output (UTF-8 text)', contentType: 'text/plain' }, 404: noExecution },
      handle: async ({ principal, params, signal }) => {
        const events = await executions.follow(principal.accountId, params.workspaceId, params.trigger, params.runId, signal);
        return new Response(outputStream(events), {
          status: 200,
          headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' },
        });
      },
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/command/{trigger}/executions/{runId}/events',
      tag: TAG,
      summary: 'Follow an execution (server-sent events): its status now and each change, and its output as it comes',
      params: executionParams,
      responses: {
        200: {
          description:
            'text/event-stream: `status` frames (data: the execution without its output) and `output` frames (data: JSON {text}); ends after the final status',
          contentType: 'text/event-stream',
        },
        404: noExecution,
      },
      handle: async ({ principal, params, signal }) => {
        const controller = new AbortController();
        const events = await executions.follow(principal.accountId, params.workspaceId, params.trigger, params.runId, AbortSignal.any([signal, controller.signal]));
        const stream = openSseStream({ ...sse, clock, signal, onClose: () => controller.abort() });
        void (async () => {
          let id = 0;
          for await (const event of events) {
            const body = event.type === 'status' ? event.execution : { text: event.text };
            if (!stream.send({ event: event.type, id: ++id, data: JSON.stringify(body) })) return;
          }
          stream.end();
        })();
        return stream.response;
      },
    }),
    route({
      method: 'DELETE',
      path: '/workspace/{workspaceId}/command/{trigger}/executions/{runId}',
      tag: TAG,
      summary: 'Cancel a queued or running execution (a shell command’s whole process group is killed)',
      params: executionParams,
      responses: {
        200: { description: 'the cancelled execution', schema: changed(executionSchema) },
        404: noExecution,
        409: { description: 'the execution has already finished; the message names its status', schema: apiErrorBody },
      },
      handle: async ({ principal, params }) => ({
        status: 200,
        body: { message: `execution ${params.runId} cancelled`, data: await executions.cancel(principal.accountId, params.workspaceId, params.trigger, params.runId) },
      }),
    }),
  ];
}

/** The output events as a text body; the stream ends with the execution (or when the client goes). */
function outputStream(events: AsyncIterable<ExecutionEvent>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = events[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return controller.close();
        if (next.value.type === 'output') return controller.enqueue(encoder.encode(next.value.text));
      }
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}
