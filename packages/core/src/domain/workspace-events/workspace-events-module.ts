import { ContainerModule } from 'inversify';
import { RouteTable } from '../../http/route';
import { SseSettings } from '../../http/sse';
import { Clock } from '../../ports/clock';
import { Logger } from '../../ports/logger';
import { WorkspaceService } from '../workspaces/workspace-service';
import { BusWorkspaceEvents } from './bus-workspace-events';
import { LiveRelay } from './live-relay';
import { WorkspaceEvents } from './workspace-events';
import { workspaceEventsRoutes } from './workspace-events-routes';

/**
 * The event stream of workspaces: `WorkspaceEvents` (on the `DurableEventBus`), which every
 * workspace feature publishes through, and its SSE route; `LiveRelay`, live sources (thread
 * replies, command output) followed from another instance.
 */
export const workspaceEventsModule = new ContainerModule(({ bind }) => {
  bind(BusWorkspaceEvents).toSelf().inSingletonScope();
  bind(WorkspaceEvents).toService(BusWorkspaceEvents);
  bind(LiveRelay).toSelf().inSingletonScope();
  bind(RouteTable)
    .toResolvedValue(
      (workspaces: WorkspaceService, events: WorkspaceEvents, clock: Clock, sse: SseSettings, logger: Logger) =>
        workspaceEventsRoutes({ workspaces, events, clock, sse, logger }),
      [WorkspaceService, WorkspaceEvents, Clock, SseSettings, Logger],
    )
    .inSingletonScope();
});
