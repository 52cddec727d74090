import { ContainerModule } from 'inversify';
import { HttpClient } from '../../ports/http-client';
import { Logger } from '../../ports/logger';
import { ModelGateway } from '../../ports/model-gateway';
import { AiSdkModelGateway } from './ai-sdk-gateway';
import { ModelVendors } from './model-vendors';

/**
 * The model gateway over the seven vendor adapters, sending through the bound `HttpClient`. Hosts
 * rebind `ModelGateway` to replace it.
 */
export const modelsModule = new ContainerModule(({ bind }) => {
  bind(ModelVendors).toConstantValue(new ModelVendors());
  bind(ModelGateway).toResolvedValue(
    (vendors: ModelVendors, http: HttpClient, logger: Logger) => new AiSdkModelGateway(vendors, { http, logger }),
    [ModelVendors, HttpClient, Logger],
  );
});
