import { ContainerModule } from 'inversify';
import { RouteTable } from '../../http/route';
import { Migrations } from '../storage/migrations';
import { resourceMigrations } from './resource-record';
import { ResourceService } from './resource-service';
import { ResourceUploads } from './resource-uploads';
import { ActiveRunResourceUsage, ResourceUsage } from './resource-usage';
import { resourcesRoutes } from './resources-routes';

/**
 * Resources: records, content-addressed shared bytes, uploads and downloads. The `BlobStore` and
 * `MultipartParser` adapters are bound by the platform module; `ResourceUsage` reads the runs.
 */
export const resourcesModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue(resourceMigrations);
  bind(ActiveRunResourceUsage).toSelf().inSingletonScope();
  bind(ResourceUsage).toService(ActiveRunResourceUsage);
  bind(ResourceService).toSelf().inSingletonScope();
  bind(ResourceUploads).toSelf().inSingletonScope();
  bind(RouteTable)
    .toResolvedValue((resources: ResourceService, uploads: ResourceUploads) => resourcesRoutes(resources, uploads), [ResourceService, ResourceUploads])
    .inSingletonScope();
});
