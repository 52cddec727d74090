import { ContainerModule } from 'inversify';
import { Migrations } from '../storage/migrations';
import { BusWorkspaceEvents } from '../workspace-events/bus-workspace-events';
import { WorkspaceEvents } from '../workspace-events/workspace-events';
import { WorkspaceConfigService } from './workspace-config-service';
import { workspaceMigrations, WorkspaceService } from './workspace-service';

/** Workspaces: records, their files (through the `WorkspaceFileSystems` port) and their event stream. */
export const workspacesModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue(workspaceMigrations);
  bind(WorkspaceService).toSelf().inSingletonScope();
  bind(WorkspaceConfigService).toSelf().inSingletonScope();
  bind(BusWorkspaceEvents).toSelf().inSingletonScope();
  bind(WorkspaceEvents).toService(BusWorkspaceEvents);
});
