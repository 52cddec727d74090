import { ContainerModule } from 'inversify';
import { Migrations } from '../storage/migrations';
import { RunRepository, runsMigrations } from './run-repository';

/** Runs: the run record's store. */
export const runsModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue(runsMigrations);
  bind(RunRepository).toSelf().inSingletonScope();
});
