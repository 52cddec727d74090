import { ContainerModule } from 'inversify';
import { RouteTable } from '../../http/route';
import { Migrations } from '../storage/migrations';
import { evaluationRoutes } from './evaluation-routes';
import { evaluationMigrations, EvaluationService } from './evaluation-service';

/** Evaluations of run outputs against gold labels. Needs the runs and gold-labels modules. */
export const evaluationsModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue(evaluationMigrations);
  bind(EvaluationService).toSelf().inSingletonScope();
  bind(RouteTable).toResolvedValue((evaluations: EvaluationService) => evaluationRoutes(evaluations), [EvaluationService]);
});
