import { ContainerModule } from 'inversify';
import { RouteTable } from '../../http/route';
import { Migrations } from '../storage/migrations';
import { workspaceConfigRoutes } from './workspace-config-routes';
import { WorkspaceConfigService } from './workspace-config-service';
import { WorkspaceLocks } from './workspace-locks';
import { WorkspaceMetadataService } from './workspace-metadata';
import { workspaceMigrations } from './workspace-migrations';
import { workspaceRoutes } from './workspace-routes';
import { WorkspaceService } from './workspace-service';
import { workspaceTemplateRoutes } from './workspace-template-routes';
import { WorkspaceTemplateService } from './workspace-template-service';

/**
 * Workspaces: records, lifecycle, metadata summary, configuration and templates; their files
 * (through the `WorkspaceFileSystems` port); their event stream is `workspace-events/`. Other
 * features add to the metadata summary by binding `WorkspaceMetadataContributor`.
 */
export const workspacesModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue(workspaceMigrations);
  bind(WorkspaceService).toSelf().inSingletonScope();
  bind(WorkspaceLocks).toSelf().inSingletonScope();
  bind(WorkspaceTemplateService).toSelf().inSingletonScope();
  bind(WorkspaceConfigService).toSelf().inSingletonScope();
  bind(WorkspaceMetadataService).toSelf().inSingletonScope();
  bind(RouteTable).toResolvedValue(
    (workspaces: WorkspaceService, metadata: WorkspaceMetadataService, templates: WorkspaceTemplateService, config: WorkspaceConfigService) => [
      ...workspaceTemplateRoutes(templates),
      ...workspaceRoutes(workspaces, metadata),
      ...workspaceConfigRoutes(config),
    ],
    [WorkspaceService, WorkspaceMetadataService, WorkspaceTemplateService, WorkspaceConfigService],
  );
});
