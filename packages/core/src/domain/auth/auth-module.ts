import { ContainerModule } from 'inversify';
import { RunloomConfig } from '../../config';
import { Authenticator, RouteTable } from '../../http/route';
import { Lifecycle } from '../lifecycle';
import { Migrations } from '../storage/migrations';
import { AuthLifecycle } from './auth-lifecycle';
import { authMigrations } from './auth-migrations';
import { authRoutes, BearerAuthenticator } from './auth-routes';
import { AuthService, AuthServiceImpl } from './auth-service';
import { SigningKeyRing } from './signing-keys';
import { TokenThrottle } from './token-throttle';

/** Auth: clients, token issuance and verification, the token endpoint and the JWKS. */
export const authModule = new ContainerModule(({ bind }) => {
  bind(Migrations).toConstantValue(authMigrations);
  bind(SigningKeyRing).toSelf().inSingletonScope();
  bind(TokenThrottle).toSelf().inSingletonScope();
  bind(AuthServiceImpl).toSelf().inSingletonScope();
  bind(AuthService).toService(AuthServiceImpl);
  bind(BearerAuthenticator).toSelf().inSingletonScope();
  bind(Authenticator).toService(BearerAuthenticator);
  bind(AuthLifecycle).toSelf().inSingletonScope();
  bind(Lifecycle).toService(AuthLifecycle);
  bind(RouteTable)
    .toResolvedValue((auth: AuthService, config: RunloomConfig) => authRoutes(auth, config.jsonBodyLimitBytes), [AuthService, RunloomConfig])
    .inSingletonScope();
});
