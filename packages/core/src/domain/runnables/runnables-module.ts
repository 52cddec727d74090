import { ContainerModule } from 'inversify';
import { RouteTable } from '../../http/route';
import { ProviderService } from '../providers/provider-service';
import { Migrations } from '../storage/migrations';
import { EnabledProviders, noEnabledProviders } from './enabled-providers';
import { RunnableRepository, RunnableVersionRepository, runnablesMigrations } from './runnable-repositories';
import { RunnableService } from './runnable-service';
import { runnablesRoutes } from './runnables-routes';

/** Runnables: their store, `RunnableService` and the `/v1/runnable(s)` routes. */
export const runnablesModule = new ContainerModule(({ bind, isBound }) => {
  bind(Migrations).toConstantValue(runnablesMigrations);
  // A module loaded earlier may have bound its own list; otherwise the providers feature's, when loaded.
  if (!isBound(EnabledProviders)) {
    if (isBound(ProviderService)) {
      bind(EnabledProviders).toResolvedValue(
        (providers: ProviderService): EnabledProviders => ({ list: (accountId) => providers.enabledProviders(accountId) }),
        [ProviderService],
      );
    } else {
      bind(EnabledProviders).toConstantValue(noEnabledProviders);
    }
  }
  bind(RunnableRepository).toSelf().inSingletonScope();
  bind(RunnableVersionRepository).toSelf().inSingletonScope();
  bind(RunnableService).toSelf().inSingletonScope();
  bind(RouteTable)
    .toResolvedValue((runnables: RunnableService) => runnablesRoutes(runnables), [RunnableService])
    .inSingletonScope();
});
