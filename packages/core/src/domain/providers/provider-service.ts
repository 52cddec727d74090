import { inject, injectable } from 'inversify';
import { DomainError } from '../errors';
import { Clock } from '../../ports/clock';
import { Database, DuplicateIdError, type Migration, WriteConflictError, type WriteOp } from '../../ports/database';
import { EgressRefusedError, HttpClient, HttpRequestError } from '../../ports/http-client';
import { IdGenerator } from '../../ports/id-generator';
import { SecretBox } from '../../ports/secret-box';
import { KeptRecords } from '../storage/kept-records';
import { type AccountRecord, Repository } from '../storage/repository';
import { maskCredentials, parseCredentials, refuseMisplacedCredentials, type ProviderCredentials } from './provider-credentials';
import { isProviderName, PROVIDER_NAMES, type ProviderName } from '../../ports/provider-names';
import { lazyLruCache } from '../lazy';

export const PROVIDERS_COLLECTION = 'llm_providers';

export const providerMigrations: Migration[] = [
  { id: 'providers/001-create', steps: [{ createCollection: PROVIDERS_COLLECTION, fields: { account_id: 'text', provider: 'text', enabled: 'boolean' } }] },
  {
    // Expected by a run's acceptance (`keptForRun`) on a record found by id: no index.
    id: 'providers/002-version',
    steps: [{ addField: { collection: PROVIDERS_COLLECTION, field: 'version', type: 'text' } }, { unindexField: { collection: PROVIDERS_COLLECTION, field: 'version' } }],
  },
];

/** One provider configuration of one account. Credentials exist at rest only sealed. */
export interface ProviderConfigRecord extends AccountRecord {
  provider: ProviderName;
  enabled: boolean;
  sealed_credentials: string;
  /** A new id at every put, so a kept copy can be checked to be the stored one (`keptForRun`); absent in records written before it. */
  version?: string;
  /** Absent in records written before limits existed: no limit. */
  max_concurrency?: number | null;
  requests_per_minute?: number | null;
  created_at: string;
  updated_at: string;
}

/**
 * What the account allows its runs on this provider (ARCHITECTURE.md, "Run scheduling"): calls at
 * the vendor at once, and calls started per minute; null: no limit of its own (the vendor's 429s
 * still back it off).
 */
export interface ProviderCallLimits {
  max_concurrency: number | null;
  requests_per_minute: number | null;
}

/** A provider configuration as answered: secret values masked. */
export interface ProviderConfigView extends ProviderCallLimits {
  provider: ProviderName;
  enabled: boolean;
  credentials: Record<string, string>;
  created_at: string;
  updated_at: string;
}

export interface ProviderConfigInput extends Partial<ProviderCallLimits> {
  enabled: boolean;
  credentials: unknown;
}

/**
 * A configuration this instance read, with the `check` that fails a write unless it is still the
 * stored one (`ProviderService.keptForRun`).
 */
export interface KeptProviderConfig {
  readonly record: ProviderConfigRecord;
  readonly check: WriteOp;
}

/** What a model call needs: the opened credentials and the account's limits on the provider. */
export interface ProviderCallSettings<P extends ProviderName> {
  credentials: ProviderCredentials[P];
  limits: ProviderCallLimits;
}

/** Thrown when a model call needs a provider the account has not configured or has disabled. */
export class ProviderUnavailableError extends DomainError {
  constructor(
    readonly provider: ProviderName,
    reason: 'not_configured' | 'disabled',
  ) {
    super(
      'BAD_REQUEST',
      reason === 'not_configured'
        ? `provider ${provider} is not configured for this account; configure it with PUT /v1/llm-provider/${provider}`
        : `provider ${provider} is disabled for this account; enable it with PUT /v1/llm-provider/${provider}`,
    );
  }
}

/** A write lost a race with another write of the same configuration: read again and retry. */
const MAX_WRITE_ATTEMPTS = 4;
/** Configurations kept between writes (`KeptRecords`), and whose opened credentials are kept (`ProviderService.open`). */
const CONFIGURATIONS_KEPT = 1000;

/**
 * Per-account LLM provider configurations (docs/api.md#providers): validated per provider, sealed
 * by the `SecretBox`, answered masked, opened only when a model call needs them.
 */
@injectable()
export class ProviderService {
  private readonly configs: Repository<ProviderConfigRecord>;
  /** The configurations model calls read: every run reads one, and they change rarely. */
  private readonly keptConfigs: KeptRecords<ProviderConfigRecord>;
  /**
   * By configuration id: the sealed text last opened and what it opened to; least recently used dropped
   * first.
   */
  private readonly opened = lazyLruCache<string, { sealed: string; credentials: Record<string, string> }>({ max: CONFIGURATIONS_KEPT });
  /**
   * On a store other instances write unseen (no collection version, so `keptConfigs` keeps nothing):
   * by configuration id, the one model calls here read last, for `keptForRun`.
   */
  private readonly lastRead = lazyLruCache<string, ProviderConfigRecord>({ max: CONFIGURATIONS_KEPT });

  constructor(
    @inject(Database) database: Database,
    @inject(SecretBox) private readonly secretBox: SecretBox,
    @inject(Clock) private readonly clock: Clock,
    @inject(HttpClient) private readonly http: HttpClient,
    @inject(IdGenerator) private readonly ids: IdGenerator,
  ) {
    this.configs = new Repository(database, PROVIDERS_COLLECTION);
    this.keptConfigs = new KeptRecords(this.configs, CONFIGURATIONS_KEPT);
  }

  /** Every configured provider of the account, in the order of `PROVIDER_NAMES`. */
  async list(accountId: string): Promise<ProviderConfigView[]> {
    const records = await this.configs.find(accountId);
    const ordered = records.sort((a, b) => PROVIDER_NAMES.indexOf(a.provider) - PROVIDER_NAMES.indexOf(b.provider));
    return Promise.all(ordered.map(async (record) => this.view(record, await this.open(record))));
  }

  /** Creates or replaces the configuration; `created` tells which. */
  async put(accountId: string, providerName: string, input: ProviderConfigInput): Promise<{ created: boolean; config: ProviderConfigView }> {
    const provider = parseProviderName(providerName);
    refuseMisplacedCredentials(provider, input);
    const credentials = parseCredentials(provider, input.enabled, input.credentials);
    if (credentials.base_url !== undefined) await this.checkBaseUrl(provider, credentials.base_url);
    const sealed = await this.secretBox.seal(JSON.stringify(credentials));
    const id = configId(accountId, provider);
    for (let attempt = 1; ; attempt += 1) {
      const existing = await this.configs.get(accountId, id);
      const now = this.clock.now().toISOString();
      const record: ProviderConfigRecord = {
        id,
        account_id: accountId,
        provider,
        enabled: input.enabled,
        sealed_credentials: sealed,
        max_concurrency: input.max_concurrency ?? null,
        requests_per_minute: input.requests_per_minute ?? null,
        created_at: existing?.created_at ?? now,
        updated_at: now,
        version: this.ids.newId(),
      };
      try {
        if (existing) await this.configs.replace(record);
        else await this.configs.insert(record);
        return { created: !existing, config: this.view(record, credentials) };
      } catch (error) {
        const lostRace = error instanceof DuplicateIdError || error instanceof WriteConflictError;
        if (!lostRace || attempt === MAX_WRITE_ATTEMPTS) throw error;
      }
    }
  }

  /** Removes the configuration; false when the account has none for `provider`. */
  async delete(accountId: string, providerName: string): Promise<boolean> {
    const provider = parseProviderName(providerName);
    try {
      await this.configs.delete(accountId, configId(accountId, provider));
      return true;
    } catch (error) {
      if (error instanceof WriteConflictError) return false;
      throw error;
    }
  }

  /** The plaintext credentials for a model call, opened now; fails naming the provider when unusable. */
  async getCredentials<P extends ProviderName>(accountId: string, provider: P): Promise<ProviderCredentials[P]> {
    return (await this.getCallSettings(accountId, provider)).credentials;
  }

  /**
   * The credentials (opened now) and the account's limits for a model call; fails naming the
   * provider when unusable. `kept`: a configuration of `keptForRun` whose check the run's
   * acceptance carried, used as it is rather than read again.
   */
  async getCallSettings<P extends ProviderName>(accountId: string, provider: P, kept?: KeptProviderConfig): Promise<ProviderCallSettings<P>> {
    const record = kept?.record.provider === provider && kept.record.account_id === accountId ? kept.record : await this.read(accountId, provider);
    if (!record) throw new ProviderUnavailableError(provider, 'not_configured');
    if (!record.enabled) throw new ProviderUnavailableError(provider, 'disabled');
    return { credentials: (await this.open(record)) as unknown as ProviderCredentials[P], limits: limitsOf(record) };
  }

  /**
   * On a store other instances write unseen, the configuration of `provider` that a model call here
   * read last, with the check a write must carry to rely on it: the write then holds only while the
   * stored configuration is still that one (every put gives it a new `version`), so a run whose
   * acceptance carried it uses what was stored when it was accepted, wherever the last change was
   * made. Undefined when none is kept, and on a store with collection versions (where
   * `getCallSettings` reads nothing while the collection is unchanged).
   */
  keptForRun(accountId: string, provider: ProviderName): KeptProviderConfig | undefined {
    if (this.configs.collectionVersion() !== undefined) return undefined;
    const id = configId(accountId, provider);
    const record = this.lastRead().get(id);
    if (record?.version === undefined) return undefined;
    return { record, check: this.configs.checkOp(accountId, id, { version: record.version }) };
  }

  /** Drops the kept copy of configuration `id` (its check failed: it changed since). */
  forgetKept(id: string): void {
    this.lastRead().delete(id);
  }

  /** The account's enabled providers, in the order of `PROVIDER_NAMES`. */
  async enabledProviders(accountId: string): Promise<ProviderName[]> {
    const enabled = new Set((await this.configs.find(accountId, { where: { enabled: true } })).map((record) => record.provider));
    return PROVIDER_NAMES.filter((provider) => enabled.has(provider));
  }

  /**
   * Refuses (400) a `base_url` the egress policy refuses: a loopback, private, link-local,
   * metadata… address, or a name resolving to one. A name that does not resolve now is accepted:
   * every model call checks the addresses of the moment again.
   */
  private async checkBaseUrl(provider: ProviderName, baseUrl: string): Promise<void> {
    const refuse = (message: string): DomainError =>
      DomainError.invalid(`invalid ${provider} credentials: credentials.base_url: ${message}`, [{ path: 'credentials.base_url', message }]);
    try {
      await this.http.checkDestination(baseUrl);
    } catch (error) {
      if (error instanceof EgressRefusedError) throw refuse(`refused: ${error.message}`);
      if (error instanceof HttpRequestError && (error.kind === 'dns' || error.kind === 'timeout')) return;
      if (error instanceof HttpRequestError) throw refuse(error.message);
      throw error;
    }
  }

  /** The stored configuration; on a store without collection versions kept for `keptForRun` too. */
  private async read(accountId: string, provider: ProviderName): Promise<ProviderConfigRecord | undefined> {
    const id = configId(accountId, provider);
    const record = await this.keptConfigs.get(accountId, id);
    if (this.configs.collectionVersion() === undefined) {
      // Frozen: the runs that use it share it.
      if (record?.version === undefined) this.lastRead().delete(id);
      else this.lastRead().set(id, Object.freeze(record));
    }
    return record;
  }

  /**
   * The record's credentials. Opening them again for every model call was a few percent of a run's
   * CPU, so the last opening per configuration is kept; it is used only while the stored sealed
   * text is the same (every put seals anew, with a fresh nonce), so a change on any instance shows
   * at the next call. Each caller gets its own copy.
   */
  private async open(record: ProviderConfigRecord): Promise<Record<string, string>> {
    const kept = this.opened().get(record.id);
    if (kept?.sealed === record.sealed_credentials) return { ...kept.credentials };
    const credentials = JSON.parse(await this.secretBox.open(record.sealed_credentials)) as Record<string, string>;
    this.opened().set(record.id, { sealed: record.sealed_credentials, credentials });
    return { ...credentials };
  }

  private view(record: ProviderConfigRecord, credentials: Record<string, string>): ProviderConfigView {
    return {
      provider: record.provider,
      enabled: record.enabled,
      credentials: maskCredentials(credentials),
      ...limitsOf(record),
      created_at: record.created_at,
      updated_at: record.updated_at,
    };
  }
}

/** A name outside the seven is bad input (400), unlike a known provider with no configuration (404). */
export function parseProviderName(name: string): ProviderName {
  if (isProviderName(name)) return name;
  throw DomainError.invalid(`unknown provider '${name.slice(0, 100)}'; use one of ${PROVIDER_NAMES.join(', ')}`);
}

function limitsOf(record: ProviderConfigRecord): ProviderCallLimits {
  return { max_concurrency: record.max_concurrency ?? null, requests_per_minute: record.requests_per_minute ?? null };
}

/** One configuration per account and provider; no provider name contains ':', so ids never collide. */
function configId(accountId: string, provider: ProviderName): string {
  return `${accountId}:${provider}`;
}
