import { ContainerModule } from 'inversify';
import { RouteTable } from '../../http/route';
import { Lifecycle } from '../lifecycle';
import { Migrations } from '../storage/migrations';
import { CallbackDispatcher } from './callback-dispatcher';
import { webhookSecretRoutes } from './webhook-secret-routes';
import { webhookSecretMigrations, WebhookSecretService } from './webhook-secret-service';

/** Webhooks: the account's signing secret and the delivery of run-completion callbacks. Needs the runs module. */
export const webhooksModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue(webhookSecretMigrations);
  bind(WebhookSecretService).toSelf().inSingletonScope();
  bind(CallbackDispatcher).toSelf().inSingletonScope();
  bind(Lifecycle).toService(CallbackDispatcher);
  bind(RouteTable).toResolvedValue((secrets: WebhookSecretService) => webhookSecretRoutes(secrets), [WebhookSecretService]);
});
