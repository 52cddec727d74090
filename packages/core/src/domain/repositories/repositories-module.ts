import { ContainerModule } from 'inversify';
import { RouteTable } from '../../http/route';
import { Migrations } from '../storage/migrations';
import { RepositoryCloner } from './repository-cloner';
import { repositoryRoutes } from './repository-routes';
import { repositoryMigrations, RepositoryService } from './repository-service';

/** Repository integrations: workspaces connected to git remotes, and clones for templates. */
export const repositoriesModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue(repositoryMigrations);
  bind(RepositoryCloner).toSelf().inSingletonScope();
  bind(RepositoryService).toSelf().inSingletonScope();
  bind(RouteTable).toResolvedValue((repositories: RepositoryService) => repositoryRoutes(repositories), [RepositoryService]);
});
