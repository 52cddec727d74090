import { ContainerModule } from 'inversify';
import { RunloomConfig } from '../config';
import { Metrics } from '../ports/metrics';
import { RequestLog } from './request-log';
import { Clock } from '../ports/clock';
import { Logger } from '../ports/logger';
import { Authenticator, RouteTable } from './route';
import { Router } from './router';
import { DEFAULT_SSE_SETTINGS, SseSettings } from './sse';

/**
 * Binds the `Router`: every feature's route table (ops included), its request log and metrics; and
 * the settings of every event stream (`http/sse.ts`).
 */
export const httpModule = new ContainerModule(({ bind }) => {
  bind(SseSettings).toConstantValue(DEFAULT_SSE_SETTINGS);
  bind(Router)
    .toResolvedValue(
      (
        config: RunloomConfig,
        tables: RouteTable[] | undefined,
        authenticator: Authenticator,
        logger: Logger,
        metrics: Metrics,
        clock: Clock,
      ) => {
        const router = new Router((tables ?? []).flat(), {
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
        Clock,
      ],
    )
    .inSingletonScope();
});
