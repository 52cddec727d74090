import * as z from 'zod';
import { ApiError } from '../../http/api-error';
import { apiErrorBody } from '../../http/error-schema';
import { route, type RouteDefinition } from '../../http/route';
import { pacedSseResponse, type SseSettings } from '../../http/sse';
import type { Clock } from '../../ports/clock';
import { pageQuery } from '../input/page-query';
import {
  patchThreadBody,
  patchThreadMetadataBody,
  saveThreadBody,
  streamThreadBody,
  threadIdSchema,
  threadMetadataSchema,
  threadSchema,
} from './thread-schemas';
import type { ThreadService } from './thread-service';
import type { ThreadStream } from './thread-stream-registry';
import type { ThreadStreams } from './thread-streams';
import { lazySchema } from '../lazy-schema';

const workspaceParams = lazySchema(() => z.object({ workspaceId: z.uuid() }));
const threadParams = lazySchema(() => z.object({ workspaceId: z.uuid(), threadId: threadIdSchema() }));

const acknowledged = (data: z.ZodType) => lazySchema(() => z.object({ message: z.string(), data }));
const errors = {
  404: { description: 'no such workspace (in this account) or thread', schema: apiErrorBody },
};
const archived = { 409: { description: 'the workspace is archived', schema: apiErrorBody } };
const broken = { 409: { description: 'the thread file is not a valid thread (the message names the problem), or the workspace is archived', schema: apiErrorBody } };
const eventStream = {
  description:
    'the AI SDK UI message stream (SSE, `x-vercel-ai-ui-message-stream: v1`): one `data:` JSON chunk per frame, each with an `id:`, ending with `data: [DONE]`; a comment line every 15 s',
  contentType: 'text/event-stream',
};

/** The HTTP face of threads and their streams (docs/api.md#threads, docs/api.md#thread-streams). */
export function threadRoutes(threads: ThreadService, streams: ThreadStreams, clock: Clock, sse: Pick<SseSettings, 'heartbeatMs'>): RouteDefinition[] {
  const streamResponse = (stream: ThreadStream, after: number): Response => subscriberResponse(stream, after, clock, sse.heartbeatMs);
  return [
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/threads',
      tag: 'threads',
      summary: "List the workspace's threads from the metadata index, most recently updated first",
      params: workspaceParams,
      query: pageQuery,
      responses: { 200: { description: 'the threads', schema: lazySchema(() => z.object({ data: z.array(threadMetadataSchema) })) }, ...errors },
      handle: async ({ principal, params, query }) => ({ status: 200, body: { data: await threads.list(principal.accountId, params.workspaceId, query) } }),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/thread/{threadId}',
      tag: 'threads',
      summary: 'Get a thread with its messages',
      params: threadParams,
      responses: { 200: { description: 'the thread', schema: lazySchema(() => z.object({ data: threadSchema })) }, ...errors, ...broken },
      handle: async ({ principal, params }) => ({
        status: 200,
        body: { data: await threads.get(principal.accountId, params.workspaceId, params.threadId) },
      }),
    }),
    route({
      method: 'PATCH',
      path: '/workspace/{workspaceId}/thread/{threadId}',
      tag: 'threads',
      summary: 'Change a thread: messages merge by id (new ones appended), title, summary and metadata replace',
      params: threadParams,
      body: { json: patchThreadBody },
      responses: { 200: { description: 'the changed thread', schema: acknowledged(threadSchema) }, ...errors, ...broken },
      handle: async ({ principal, params, body }) => ({
        status: 200,
        body: { message: `thread ${params.threadId} updated`, data: await threads.patch(principal.accountId, params.workspaceId, params.threadId, body) },
      }),
    }),
    route({
      method: 'PATCH',
      path: '/workspace/{workspaceId}/thread/{threadId}/metadata',
      tag: 'threads',
      summary: "Change a thread's title and metadata only (never its messages)",
      params: threadParams,
      body: { json: patchThreadMetadataBody },
      responses: { 200: { description: 'the changed thread', schema: acknowledged(threadSchema) }, ...errors, ...broken },
      handle: async ({ principal, params, body }) => ({
        status: 200,
        body: {
          message: `thread ${params.threadId} metadata updated`,
          data: await threads.patchMetadata(principal.accountId, params.workspaceId, params.threadId, body),
        },
      }),
    }),
    route({
      method: 'POST',
      path: '/workspace/{workspaceId}/thread/{threadId}/save',
      tag: 'threads',
      summary: 'Create a thread, or overwrite it whole (a broken thread file included)',
      params: threadParams,
      body: { json: saveThreadBody },
      responses: {
        200: { description: 'overwritten', schema: acknowledged(threadSchema) },
        201: { description: 'created', schema: acknowledged(threadSchema) },
        404: { description: 'no such workspace in this account', schema: apiErrorBody },
        ...archived,
      },
      handle: async ({ principal, params, body }) => {
        const { created, thread } = await threads.save(principal.accountId, params.workspaceId, params.threadId, body);
        return { status: created ? 201 : 200, body: { message: `thread ${params.threadId} ${created ? 'created' : 'saved'}`, data: thread } };
      },
    }),
    route({
      method: 'DELETE',
      path: '/workspace/{workspaceId}/thread/{threadId}',
      tag: 'threads',
      summary: 'Delete a thread (its file and its index row)',
      params: threadParams,
      responses: { 200: { description: 'deleted', schema: lazySchema(() => z.object({ message: z.string() })) }, ...errors, ...archived },
      handle: async ({ principal, params }) => {
        await threads.delete(principal.accountId, params.workspaceId, params.threadId);
        return { status: 200, body: { message: `thread ${params.threadId} deleted` } };
      },
    }),
    route({
      method: 'POST',
      path: '/workspace/{workspaceId}/threads/rebuild-metadata',
      tag: 'threads',
      summary: 'Rebuild the thread metadata index from the thread files',
      params: workspaceParams,
      responses: {
        200: {
          description: 'rebuilt: how many threads the files hold, and how many of them are broken',
          schema: lazySchema(() => acknowledged(z.object({ threads: z.int(), problems: z.int() }))),
        },
        404: { description: 'no such workspace in this account', schema: apiErrorBody },
      },
      handle: async ({ principal, params }) => {
        const counts = await threads.rebuildMetadata(principal.accountId, params.workspaceId);
        return { status: 200, body: { message: `thread metadata rebuilt from ${counts.threads} thread files`, data: counts } };
      },
    }),
    route({
      method: 'POST',
      path: '/workspace/{workspaceId}/threads/stream',
      tag: 'threads',
      summary: "Append the user message and stream the assistant's reply (the AI SDK UI message stream)",
      params: workspaceParams,
      body: { json: streamThreadBody },
      responses: {
        200: eventStream,
        400: { description: 'empty message, no model (request or workspace config models.default), or the provider is not configured or disabled', schema: apiErrorBody },
        ...errors,
        409: { description: 'the thread is already streaming a reply (the message names the stream), its file is broken, or the workspace is archived', schema: apiErrorBody },
      },
      handle: async ({ principal, params, body }) => streamResponse(await streams.reply(principal.accountId, params.workspaceId, body), 0),
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/threads/stream',
      tag: 'threads',
      summary: "Rejoin a thread's active stream from its start, or after the chunk named by Last-Event-ID; 204 when none is active",
      params: workspaceParams,
      query: lazySchema(() => z.object({ threadId: threadIdSchema() })),
      responses: {
        200: eventStream,
        204: { description: 'no reply is streaming on this thread' },
        404: { description: 'no such workspace in this account', schema: apiErrorBody },
      },
      handle: async ({ principal, params, query, header }) => {
        const after = lastEventId(header('last-event-id'));
        const stream = await streams.active(principal.accountId, params.workspaceId, query.threadId);
        return stream ? streamResponse(stream, after) : { status: 204 };
      },
    }),
    route({
      method: 'DELETE',
      path: '/workspace/{workspaceId}/threads/{threadId}/stream',
      tag: 'threads',
      summary: "Cancel the thread's streaming reply; answers once the partial reply is saved (marked cancelled)",
      params: threadParams,
      responses: { 200: { description: 'cancelled, or nothing was streaming', schema: lazySchema(() => z.object({ message: z.string() })) }, ...errors, ...broken },
      handle: async ({ principal, params }) => {
        const cancelled = await streams.cancel(principal.accountId, params.workspaceId, params.threadId);
        return {
          status: 200,
          body: { message: cancelled ? `the reply on thread ${params.threadId} was cancelled; the partial reply is saved` : `no reply is streaming on thread ${params.threadId}` },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/streams/debug',
      tag: 'threads',
      summary: "The workspace's active thread streams and their subscribers (debugging)",
      params: workspaceParams,
      responses: {
        200: {
          description: 'the active streams',
          schema: lazySchema(() =>
            z.object({
              data: z.array(
                z.object({
                  stream_id: z.string(),
                  thread_id: z.string(),
                  message_id: z.string(),
                  model: z.object({ provider: z.string(), model: z.string() }),
                  started_at: z.string(),
                  chunks: z.int(),
                  buffered_bytes: z.int(),
                  subscribers: z.int(),
                }),
              ),
            }),
          ),
        },
        404: { description: 'no such workspace in this account', schema: apiErrorBody },
      },
      handle: async ({ principal, params }) => ({ status: 200, body: { data: await streams.debug(principal.accountId, params.workspaceId) } }),
    }),
  ];
}

const STREAM_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-vercel-ai-ui-message-stream': 'v1',
  // Proxies such as nginx would otherwise hold the chunks back.
  'x-accel-buffering': 'no',
};

const encoder = new TextEncoder();

/**
 * One subscriber of `stream` as SSE, from chunk `after` + 1: every frame carries its chunk number
 * as `id:` (what `Last-Event-ID` names), and `data: [DONE]` follows the last chunk. The chunks
 * appended while the client could not take them go out in one write, and a heartbeat comment every
 * `heartbeatMs` on the clock, as on every SSE stream of the server. The client going away only
 * ends this subscription.
 *
 * Read at the client's pace (`pacedSseResponse`), not pushed (unlike `openSseStream`, which drops a
 * client that leaves 1 MiB unread): every subscriber reads the stream's one shared buffer from its
 * own position, so replaying a long reply to a rejoining client costs no copy per client and never
 * drops it.
 */
function subscriberResponse(stream: ThreadStream, after: number, clock: Clock, heartbeatMs: number): Response {
  let next = after;
  return pacedSseResponse(
    {
      take() {
        const read = stream.chunksAfter(next);
        let text = '';
        for (const chunk of read.chunks) text += `id: ${++next}\ndata: ${chunk}\n\n`;
        if (read.ended) text += `id: ${next + 1}\ndata: [DONE]\n\n`;
        return { bytes: text === '' ? undefined : encoder.encode(text), ended: read.ended };
      },
      whenReady: (listener) => stream.whenChanged(listener),
      close: stream.subscribe(),
    },
    { clock, heartbeatMs, headers: STREAM_HEADERS },
  );
}

/** The chunk number a rejoining client has (0: none); 400 for anything but a decimal number. */
function lastEventId(header: string | null): number {
  if (header === null || header.trim() === '') return 0;
  if (!/^\d{1,15}$/.test(header.trim())) throw ApiError.badRequest('Last-Event-ID must be the id of a frame of this stream (a decimal number)');
  return Number(header.trim());
}
