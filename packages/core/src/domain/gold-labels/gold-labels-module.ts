import { ContainerModule } from 'inversify';
import { RouteTable } from '../../http/route';
import { Migrations } from '../storage/migrations';
import { goldLabelRoutes } from './gold-label-routes';
import { goldLabelMigrations, GoldLabelService } from './gold-label-service';

/** Gold labels of runs: storage, service and routes. Needs the runs module's `RunRepository`. */
export const goldLabelsModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue(goldLabelMigrations);
  bind(GoldLabelService).toSelf().inSingletonScope();
  bind(RouteTable).toResolvedValue((goldLabels: GoldLabelService) => goldLabelRoutes(goldLabels), [GoldLabelService]);
});
