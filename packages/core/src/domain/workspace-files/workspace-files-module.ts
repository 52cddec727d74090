import { ContainerModule } from 'inversify';
import { RunloomConfig } from '../../config';
import { RouteTable } from '../../http/route';
import { Migrations } from '../storage/migrations';
import { WorkspaceFileService } from './workspace-file-service';
import { uploadMigrations, WorkspaceFileUploads } from './workspace-file-uploads';
import { workspaceFilesRoutes } from './workspace-files-routes';

/** Workspace files and directories: downloads, signed and direct uploads, moves, zip, PDF, path search. */
export const workspaceFilesModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue(uploadMigrations);
  bind(WorkspaceFileService).toSelf().inSingletonScope();
  bind(WorkspaceFileUploads).toSelf().inSingletonScope();
  bind(RouteTable)
    .toResolvedValue(
      (files: WorkspaceFileService, uploads: WorkspaceFileUploads, config: RunloomConfig) => workspaceFilesRoutes(files, uploads, config.jsonBodyLimitBytes),
      [WorkspaceFileService, WorkspaceFileUploads, RunloomConfig],
    )
    .inSingletonScope();
});
