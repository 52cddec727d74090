import { ContainerModule } from 'inversify';
import { RouteTable } from '../../http/route';
import { Migrations } from '../storage/migrations';
import { webhookSecretRoutes } from './webhook-secret-routes';
import { webhookSecretMigrations, WebhookSecretService } from './webhook-secret-service';

/** Webhooks: the account's signing secret (callback delivery belongs to the run engine). */
export const webhooksModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue(webhookSecretMigrations);
  bind(WebhookSecretService).toSelf().inSingletonScope();
  bind(RouteTable).toResolvedValue((secrets: WebhookSecretService) => webhookSecretRoutes(secrets), [WebhookSecretService]);
});
