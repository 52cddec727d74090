import { ContainerModule } from 'inversify';
import { RunloomConfig } from '../../config';
import { RouteTable } from '../../http/route';
import { Router } from '../../http/router';
import { Database } from '../../ports/database';
import { JobQueue } from '../../ports/job-queue';
import { Metrics } from '../../ports/metrics';
import { opsRoutes } from './ops-routes';
import { storeAndQueueReadiness } from './readiness';

/**
 * Ops: health, readiness, `/metrics` and the OpenAPI document (docs/api.md#operations). The
 * document lists every route the router serves, so it reads them from the `Router` when first
 * asked for, once the container has built it.
 */
export const opsModule = new ContainerModule(({ bind }) => {
  bind(RouteTable)
    .toDynamicValue((context) => {
      const config = context.get<RunloomConfig>(RunloomConfig);
      return opsRoutes({
        metrics: context.get<Metrics>(Metrics),
        readiness: storeAndQueueReadiness(context.get<Database>(Database), context.get<JobQueue>(JobQueue)),
        basePath: config.basePath,
        metricsToken: config.metricsToken,
        allRoutes: () => context.get(Router).routes,
      });
    })
    .inSingletonScope();
});
