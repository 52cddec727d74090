import { inject, injectable } from 'inversify';
import { RunloomConfig } from '../../config';
import type { Lifecycle } from '../lifecycle';
import { AuthService } from './auth-service';
import { parseBootstrapClients } from './bootstrap-clients';
import { SigningKeyRing } from './signing-keys';

/** At start: loads the signing keys (a fresh store's first is made on first use), then creates or updates the bootstrap clients. */
@injectable()
export class AuthLifecycle implements Lifecycle {
  readonly name = 'auth';

  constructor(
    @inject(SigningKeyRing) private readonly keys: SigningKeyRing,
    @inject(AuthService) private readonly auth: AuthService,
    @inject(RunloomConfig) private readonly config: RunloomConfig,
  ) {}

  async start(): Promise<void> {
    const clients = parseBootstrapClients(this.config.bootstrapClients);
    await this.keys.start();
    for (const client of clients) {
      try {
        await this.auth.upsertClient(client.accountId, client.clientId, client.secret);
      } catch (error) {
        throw new Error(`bootstrap client '${client.clientId}' of account '${client.accountId}': ${(error as Error).message}`, { cause: error });
      }
    }
  }
}
