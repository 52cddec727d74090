import { ContainerModule } from 'inversify';
import { RouteTable } from '../../http/route';
import { Migrations } from '../storage/migrations';
import { providerRoutes } from './provider-routes';
import { providerMigrations, ProviderService } from './provider-service';

/** LLM provider configurations: storage, service and routes. */
export const providersModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue(providerMigrations);
  bind(ProviderService).toSelf().inSingletonScope();
  bind(RouteTable).toResolvedValue((providers: ProviderService) => providerRoutes(providers), [ProviderService]);
});
