import { ContainerModule } from 'inversify';
import { RouteTable } from '../../http/route';
import { SseSettings } from '../../http/sse';
import { Clock } from '../../ports/clock';
import { Lifecycle } from '../lifecycle';
import { Migrations } from '../storage/migrations';
import { ProcessEngine, processMigrations } from './process-engine';
import { processRoutes } from './process-routes';
import { ProcessRunService } from './process-run-service';
import { ProcessTaskExecutor } from './process-task-executor';

/**
 * Process runs of workspaces: the durable engine (its jobs on the `JobQueue`), `ProcessRunService`
 * and the `/workspace/{id}/processes/…` routes. Needs the workspaces, runs and providers modules.
 */
export const processesModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue(processMigrations);
  bind(ProcessTaskExecutor).toSelf().inSingletonScope();
  bind(ProcessEngine).toSelf().inSingletonScope();
  bind(Lifecycle).toService(ProcessEngine);
  bind(ProcessRunService).toSelf().inSingletonScope();
  bind(RouteTable)
    .toResolvedValue((processes: ProcessRunService, clock: Clock, sse: SseSettings) => processRoutes(processes, clock, sse), [ProcessRunService, Clock, SseSettings])
    .inSingletonScope();
});
