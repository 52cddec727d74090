import { ContainerModule } from 'inversify';
import { RouteTable } from '../../http/route';
import { SseSettings } from '../../http/sse';
import { Clock } from '../../ports/clock';
import { Lifecycle } from '../lifecycle';
import { Migrations } from '../storage/migrations';
import { WorkspaceMetadataContributor } from '../workspaces/workspace-metadata';
import { threadRoutes } from './thread-routes';
import { ThreadService } from './thread-service';
import { threadIndexMigrations, ThreadStore } from './thread-store';
import { ThreadStreamRegistry } from './thread-stream-registry';
import { ThreadStreamRelay } from './thread-stream-relay';
import { threadStreamMigrations, ThreadStreamMarkers } from './thread-stream-markers';
import { ThreadStreams } from './thread-streams';

/**
 * Threads: files under `.runloom/threads/` of each workspace with their metadata index, and the
 * streamed replies (the registry of active streams; the lifecycle marks replies a crash cut off).
 */
export const threadsModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue([...threadIndexMigrations, ...threadStreamMigrations]);
  bind(ThreadStore).toSelf().inSingletonScope();
  bind(ThreadService).toSelf().inSingletonScope();
  bind(WorkspaceMetadataContributor).toService(ThreadService);
  bind(ThreadStreamRegistry).toSelf().inSingletonScope();
  bind(ThreadStreamRelay).toSelf().inSingletonScope();
  bind(ThreadStreamMarkers).toSelf().inSingletonScope();
  bind(ThreadStreams).toSelf().inSingletonScope();
  bind(Lifecycle).toService(ThreadStreams);
  bind(RouteTable)
    .toResolvedValue(
      (threads: ThreadService, streams: ThreadStreams, clock: Clock, sse: SseSettings) => threadRoutes(threads, streams, clock, sse),
      [ThreadService, ThreadStreams, Clock, SseSettings],
    )
    .inSingletonScope();
});
