import { ContainerModule } from 'inversify';
import { RouteTable } from '../../http/route';
import { SseSettings } from '../../http/sse';
import { Clock } from '../../ports/clock';
import { Lifecycle } from '../lifecycle';
import { Migrations } from '../storage/migrations';
import { CommandExecutionService, executionMigrations } from './command-execution-service';
import { commandRoutes } from './command-routes';
import { ProcessRunService } from '../processes/process-run-service';
import { CommandRunners, ProcessRuns } from './command-runners';
import { commandMigrations, CommandService } from './command-service';

/**
 * Workspace commands: their files and index (`CommandService`), their executions through the job
 * queue (`CommandExecutionService`, a lifecycle registering the job's handler) and the runners of
 * each type (shell commands through the `ProcessLauncher` port).
 */
export const commandsModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue([...commandMigrations, ...executionMigrations]);
  bind(CommandService).toSelf().inSingletonScope();
  bind(CommandRunners).toSelf().inSingletonScope();
  bind<ProcessRuns>(ProcessRuns).toFactory((context) => () => context.get(ProcessRunService));
  bind(CommandExecutionService).toSelf().inSingletonScope();
  bind(Lifecycle).toService(CommandExecutionService);
  bind(RouteTable)
    .toResolvedValue(
      (commands: CommandService, executions: CommandExecutionService, clock: Clock, sse: SseSettings) => commandRoutes({ commands, executions, clock, sse }),
      [CommandService, CommandExecutionService, Clock, SseSettings],
    )
    .inSingletonScope();
});
