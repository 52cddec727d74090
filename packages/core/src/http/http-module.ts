import { ContainerModule } from 'inversify';
import { RunloomConfig } from '../config';
import { Metrics, type MetricsRegistry } from '../domain/ops/metrics';
import { opsRoutes } from '../domain/ops/ops-routes';
import { storeAndQueueReadiness } from '../domain/ops/readiness';
import { RequestLog } from './request-log';
import { Clock } from '../ports/clock';
import { Database } from '../ports/database';
import { JobQueue } from '../ports/job-queue';
import { Logger } from '../ports/logger';
import { Authenticator, type RouteDefinition, RouteTable } from './route';
import { Router } from './router';

/** Binds the `Router`: every feature's route table plus health, readiness, metrics and OpenAPI. */
export const httpModule = new ContainerModule(({ bind }) => {
  bind(Router)
    .toResolvedValue(
      (
        config: RunloomConfig,
        tables: RouteTable[] | undefined,
        authenticator: Authenticator,
        logger: Logger,
        metrics: MetricsRegistry,
        jobQueue: JobQueue,
        database: Database,
        clock: Clock,
      ) => {
        let routes: RouteDefinition[] = [];
        const ops = opsRoutes({
          metrics,
          basePath: config.basePath,
          metricsToken: config.metricsToken,
          allRoutes: () => routes,
          readiness: storeAndQueueReadiness(database, jobQueue),
        });
        routes = [...ops, ...(tables ?? []).flat()];
        const router = new Router(routes, {
          basePath: config.basePath,
          jsonBodyLimitBytes: config.jsonBodyLimitBytes,
          rateLimit: config.rateLimit,
          authenticate: (authorization) => authenticator.authenticate(authorization),
          observer: new RequestLog(logger, metrics),
          clock,
        });
        metrics.gauge('runloom_open_streams', 'Response bodies being streamed', () => Promise.resolve([{ labels: {}, value: router.openStreams }]));
        return router;
      },
      [
        RunloomConfig,
        { isMultiple: true, serviceIdentifier: RouteTable, optional: true },
        Authenticator,
        Logger,
        Metrics,
        JobQueue,
        Database,
        Clock,
      ],
    )
    .inSingletonScope();
});
