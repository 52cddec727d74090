import { inject, injectable } from 'inversify';
import { Clock } from '../../ports/clock';
import { Database, DuplicateIdError, type Migration } from '../../ports/database';
import { SecretBox } from '../../ports/secret-box';
import { type AccountRecord, Repository } from '../storage/repository';

const COLLECTION = 'webhook_secrets';

export const webhookSecretMigrations: Migration[] = [
  { id: 'webhooks/001-create-secrets', steps: [{ createCollection: COLLECTION, fields: { account_id: 'text' } }] },
];

/** One per account, keyed by the account id; the secret exists at rest only sealed. */
interface WebhookSecretRecord extends AccountRecord {
  sealed_secret: string;
  created_at: string;
  updated_at: string;
}

/** Standard Webhooks: `whsec_` + base64 of 24 to 64 random bytes. */
const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/**
 * The account's webhook signing secret (docs/api.md#callbacks): made on first use, rotated on request.
 * Callbacks are signed with it in the Standard Webhooks format.
 */
@injectable()
export class WebhookSecretService {
  private readonly secrets: Repository<WebhookSecretRecord>;

  constructor(
    @inject(Database) database: Database,
    @inject(SecretBox) private readonly secretBox: SecretBox,
    @inject(Clock) private readonly clock: Clock,
  ) {
    this.secrets = new Repository(database, COLLECTION);
  }

  /** The current secret (`whsec_…`), created when the account has none yet. Also what signing uses. */
  async get(accountId: string): Promise<string> {
    const existing = await this.secrets.get(accountId, accountId);
    if (existing) return this.secretBox.open(existing.sealed_secret);
    const secret = newSecret();
    const now = this.clock.now().toISOString();
    try {
      await this.secrets.insert({ id: accountId, account_id: accountId, sealed_secret: await this.secretBox.seal(secret), created_at: now, updated_at: now });
      return secret;
    } catch (error) {
      // Two first reads at once: the other one's secret is the account's secret.
      if (!(error instanceof DuplicateIdError)) throw error;
      return this.get(accountId);
    }
  }

  /** Replaces the secret with a new one and returns it; the old one stops signing at once. */
  async rotate(accountId: string): Promise<string> {
    const secret = newSecret();
    const sealed = await this.secretBox.seal(secret);
    const now = this.clock.now().toISOString();
    const existing = await this.secrets.get(accountId, accountId);
    const record = { id: accountId, account_id: accountId, sealed_secret: sealed, created_at: existing?.created_at ?? now, updated_at: now };
    if (existing) await this.secrets.replace(record);
    else await this.insertOrReplace(record);
    return secret;
  }

  private async insertOrReplace(record: WebhookSecretRecord): Promise<void> {
    try {
      await this.secrets.insert(record);
    } catch (error) {
      if (!(error instanceof DuplicateIdError)) throw error;
      await this.secrets.replace(record);
    }
  }
}

function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(SECRET_BYTES));
  return `${SECRET_PREFIX}${btoa(String.fromCharCode(...bytes))}`;
}
