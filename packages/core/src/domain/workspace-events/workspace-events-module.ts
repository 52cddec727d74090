import { ContainerModule } from 'inversify';
import { RouteTable } from '../../http/route';
import { SseSettings } from '../../http/sse';
import { Clock } from '../../ports/clock';
import { Logger } from '../../ports/logger';
import { WorkspaceService } from '../workspaces/workspace-service';
import { WorkspaceEvents } from './workspace-events';
import { workspaceEventsRoutes } from './workspace-events-routes';

/**
 * The SSE route of workspace events. `WorkspaceEvents` itself (`BusWorkspaceEvents`, on the
 * `DurableEventBus`) is bound by the workspaces module, which every workspace feature loads.
 */
export const workspaceEventsModule = new ContainerModule(({ bind }) => {
  bind(RouteTable)
    .toResolvedValue(
      (workspaces: WorkspaceService, events: WorkspaceEvents, clock: Clock, sse: SseSettings, logger: Logger) =>
        workspaceEventsRoutes({ workspaces, events, clock, sse, logger }),
      [WorkspaceService, WorkspaceEvents, Clock, SseSettings, Logger],
    )
    .inSingletonScope();
});
