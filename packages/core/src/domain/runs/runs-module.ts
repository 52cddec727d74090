import { ContainerModule } from 'inversify';
import { RouteTable } from '../../http/route';
import { Clock } from '../../ports/clock';
import { Lifecycle } from '../lifecycle';
import { Migrations } from '../storage/migrations';
import { RunExecutor } from './executors/run-executor';
import { ProviderGates } from './provider-gates';
import { RunEngine } from './run-engine';
import { RunRepository, runsMigrations } from './run-repository';
import { RunService } from './run-service';
import { runsRoutes } from './runs-routes';

/**
 * Runs: the run record's store, the engine that executes runs through the job queue, `RunService`
 * and the `/v1/run(s)` routes. Needs the runnables, resources, providers, webhooks and models modules.
 */
export const runsModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue(runsMigrations);
  bind(RunRepository).toSelf().inSingletonScope();
  bind(ProviderGates)
    .toResolvedValue((clock: Clock) => new ProviderGates(clock), [Clock])
    .inSingletonScope();
  bind(RunExecutor).toSelf().inSingletonScope();
  bind(RunEngine).toSelf().inSingletonScope();
  bind(Lifecycle).toService(RunEngine);
  bind(RunService).toSelf().inSingletonScope();
  bind(RouteTable)
    .toResolvedValue((runs: RunService) => runsRoutes(runs), [RunService])
    .inSingletonScope();
});
