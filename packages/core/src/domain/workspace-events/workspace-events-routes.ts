import * as z from 'zod';
import { ApiError } from '../../http/api-error';
import { route, type RouteDefinition } from '../../http/route';
import { encodeSseFrame, openSseStream, type SseSettings } from '../../http/sse';
import type { Clock } from '../../ports/clock';
import type { Logger } from '../../ports/logger';
import { decimalQueryInteger } from '../input/page-query';
import type { WorkspaceService } from '../workspaces/workspace-service';
import type { PublishedWorkspaceEvent, WorkspaceEvent, WorkspaceEvents } from './workspace-events';
import { lazySchema } from '../lazy-schema';

export interface WorkspaceEventsRoutesDeps {
  workspaces: WorkspaceService;
  events: WorkspaceEvents;
  clock: Clock;
  sse: SseSettings;
  logger: Logger;
}

/** The SSE event name of every frame of the stream (docs/api.md#workspace-events). */
export const WORKSPACE_EVENT = 'workspace-event';

const LAST_EVENT_ID = /^[0-9]{1,15}$/;

/** `GET /workspace/{workspaceId}/events`: the workspace's event stream, replaying from `Last-Event-ID`. */
export function workspaceEventsRoutes({ workspaces, events, clock, sse, logger }: WorkspaceEventsRoutesDeps): RouteDefinition[] {
  // Each live event reaches every stream of its workspace as the same object: encoded once for all.
  const frames = new WeakMap<WorkspaceEvent, { id: number; bytes: Uint8Array }>();
  const frameOf = (published: PublishedWorkspaceEvent): Uint8Array => {
    const cached = frames.get(published.event);
    if (cached?.id === published.id) return cached.bytes;
    const bytes = encodeSseFrame({ event: WORKSPACE_EVENT, id: published.id, data: JSON.stringify(published.event) });
    frames.set(published.event, { id: published.id, bytes });
    return bytes;
  };
  return [
    route({
      method: 'GET',
      path: '/workspace/{workspaceId}/events',
      summary: 'Follow the events of a workspace (server-sent events)',
      tag: 'workspaces',
      params: lazySchema(() => z.object({ workspaceId: z.uuid() })),
      query: lazySchema(() =>
        z.object({
          lastEventId: decimalQueryInteger('lastEventId', { min: 0, max: Number.MAX_SAFE_INTEGER })
            .optional()
            .describe('the id of the last event received, for clients that cannot send the Last-Event-ID header; the header wins'),
        }),
      ),
      responses: {
        200: {
          description:
            'text/event-stream: one `workspace-event` frame per change, `id` increasing per workspace, `data` a JSON object with its `type`; ' +
            'a comment line every 15 s. With Last-Event-ID (or lastEventId), the retained events after it come first.',
          contentType: 'text/event-stream',
        },
      },
      handle: async ({ principal, params, query, header, signal }) => {
        await workspaces.require(principal.accountId, params.workspaceId);
        const after = lastEventIdHeader(header('last-event-id')) ?? query.lastEventId;
        let subscription: { unsubscribe(): void } | undefined;
        const stream = openSseStream({
          ...sse,
          clock,
          signal,
          onClose: (reason) => {
            subscription?.unsubscribe();
            // The client reconnects with its last id and is replayed what it missed.
            if (reason === 'too-slow') logger.info({ workspaceId: params.workspaceId, accountId: principal.accountId }, 'dropped a workspace event stream client that fell behind');
          },
        });
        if (!stream.closed) {
          subscription = events.subscribe(
            params.workspaceId,
            (published) => stream.send(frameOf(published)),
            after === undefined ? undefined : { after },
          );
        }
        return stream.response;
      },
    }),
  ];
}

/** The `Last-Event-ID` header as a number; 400 when it is not one of the ids this stream gives. */
function lastEventIdHeader(header: string | null): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (!LAST_EVENT_ID.test(header.trim())) {
    throw ApiError.badRequest('Last-Event-ID must be the id of an event of this stream: a plain decimal integer');
  }
  return Number(header.trim());
}
