import { inject, injectable } from 'inversify';
import type * as z from 'zod';
import { refuseTooDeep } from '../input/json-depth';
import { DomainError, type ErrorDetail } from '../errors';
import { validationError } from '../errors';
import { Clock } from '../../ports/clock';
import { ContentHasher } from '../../ports/content-hasher';
import { Database, WriteConflictError, type Query, type Where, type WriteOp } from '../../ports/database';
import { IdGenerator } from '../../ports/id-generator';
import { VersionedTexts } from '../storage/versioned-texts';
import {
  formatRunnableConfig,
  type ParsedRunnableConfig,
  readRunnableConfig,
  type ReadRunnableConfig,
  type RunnableConfig,
  type RunnableType,
} from './config-schema';
import { EnabledProviders } from './enabled-providers';
import { ParsedConfigCache } from './parsed-config-cache';
import { toRunnable, toRunnableVersion, type Runnable, type RunnableDoc, type RunnableVersion } from './runnable-record';
import { RunnableRepository, RunnableVersionRepository } from './runnable-repositories';
import {
  createRunnableInput,
  type CreateRunnableInput,
  type ListRunnablesQuery,
  updateRunnableInput,
  type UpdateRunnableInput,
} from './runnable-schemas';
import { lazyLruCache } from '../lazy';

/** Concurrent updates of one runnable retry on the fresh record this many times before a 409. */
const UPDATE_ATTEMPTS = 5;
/** Runnables whose JSON is kept (see `RunnableService.json`); at ~1 KB each, about 1 MB. */
const JSON_CACHE_ENTRIES = 1024;

/** A validated configuration, ready to store. */
interface StoredConfig {
  config_content: string;
  config_content_parsed: RunnableConfig;
  config_content_type: RunnableType;
  config_content_sha256: string;
}

/** A runnable for a write that rests on it (`RunnableService.getForWrite`). */
export interface RunnableForWrite {
  runnable: Readonly<Runnable>;
  /**
   * Present when `runnable` is a copy kept in this process that the store cannot vouch for: the
   * write must carry this op, which fails it with a `WriteConflictError` on the runnables'
   * collection when the runnable has changed or gone since it was kept.
   */
  check?: WriteOp;
}

/**
 * Runnables of an account (docs/api.md#runnables): create, list, read, update with a version
 * history, delete. Every read is scoped to the caller's account; another account's id is missing.
 */
@injectable()
export class RunnableService {
  private readonly parsedConfigs = new ParsedConfigCache();
  /**
   * The JSON of runnables recently read, by id and revision: every write of a runnable increments
   * its revision, so an entry never goes stale, and lists answer the same records again and again.
   */
  private readonly jsonTexts = lazyLruCache<string, string>({ max: JSON_CACHE_ENTRIES });
  /** The JSON of lists recently answered, by account and query, while no runnable was written since. */
  private readonly listTexts = new VersionedTexts();
  /**
   * Runnables recently read by `getForWrite`, by account and id, with the collection version they
   * were read at (undefined on a store without versions) and their revision.
   */
  private readonly keptRunnables = lazyLruCache<string, { version: number | undefined; revision: number; runnable: Readonly<Runnable> }>({ max: JSON_CACHE_ENTRIES });

  constructor(
    @inject(Database) private readonly database: Database,
    @inject(RunnableRepository) private readonly runnables: RunnableRepository,
    @inject(RunnableVersionRepository) private readonly versions: RunnableVersionRepository,
    @inject(Clock) private readonly clock: Clock,
    @inject(IdGenerator) private readonly ids: IdGenerator,
    @inject(EnabledProviders) private readonly enabledProviders: EnabledProviders,
    @inject(ContentHasher) private readonly hasher: ContentHasher,
  ) {}

  /** A new runnable of `accountId`; `createdBy` (the client making it) is recorded on it and its first version. */
  async create(accountId: string, input: CreateRunnableInput, createdBy: string): Promise<Runnable> {
    const fields = parseInput(createRunnableInput, input);
    const config = await this.configFrom(accountId, fields.config_content, fields.config_content_parsed);
    const now = this.clock.now().toISOString();
    const doc: RunnableDoc = {
      id: this.ids.newId(),
      account_id: accountId,
      name: fields.name,
      ...config!,
      created_at: now,
      updated_at: now,
      ...(fields.description != null ? { description: fields.description } : {}),
      created_by: createdBy,
      tags: unique(fields.tags ?? []),
      version: 1,
      revision: 1,
    };
    await this.database.write([this.runnables.insertOp(doc), this.versionOp(doc, now)]);
    return toRunnable(doc);
  }

  /** The account's runnables, oldest first, filtered by type and by tags (all must be present). */
  async list(accountId: string, filter: Partial<ListRunnablesQuery> = {}): Promise<Runnable[]> {
    return (await this.runnables.find(accountId, listQuery(filter))).map(toRunnable);
  }

  /** `list` as the JSON text of the array, each runnable's JSON made once per revision. */
  async listJson(accountId: string, filter: Partial<ListRunnablesQuery> = {}): Promise<string> {
    const query = listQuery(filter);
    // Keyed by the query itself, so a filter field it reads is always part of the key.
    return this.listTexts.keptUnder(JSON.stringify([accountId, query]), this.runnables.collectionVersion(), async () => {
      const docs = await this.runnables.find(accountId, query);
      return `[${docs.map((doc) => this.json(doc)).join(',')}]`;
    });
  }

  /** `get` as JSON text. */
  async getJson(accountId: string, id: string): Promise<string> {
    return this.json(await this.getDoc(accountId, id));
  }

  /** The runnable, or a NOT_FOUND `DomainError`. */
  async get(accountId: string, id: string): Promise<Runnable> {
    return toRunnable(await this.getDoc(accountId, id));
  }

  /**
   * `get`, frozen and shared between callers, for a write that rests on it: what every run
   * submission reads. Answered again without reading the store or parsing its JSON while no
   * runnable has been written since (`Repository.collectionVersion`). On a store without versions
   * (other instances write it unseen) a kept copy comes with `check`, which the write must carry;
   * `fresh` reads the store again (after that check failed).
   */
  async getForWrite(accountId: string, id: string, fresh = false): Promise<RunnableForWrite> {
    // Read before the store is: a write landing meanwhile moves it past what is kept under it.
    const version = this.runnables.collectionVersion();
    const key = JSON.stringify([accountId, id]);
    const kept = fresh ? undefined : this.keptRunnables().get(key);
    if (kept !== undefined && version === undefined) {
      return { runnable: kept.runnable, check: this.runnables.checkOp(accountId, id, { revision: kept.revision }) };
    }
    if (kept !== undefined && kept.version === version) return { runnable: kept.runnable };
    this.keptRunnables().delete(key);
    const doc = await this.getDoc(accountId, id);
    const runnable = deepFreeze(toRunnable(doc));
    this.keptRunnables().set(key, { version, revision: doc.revision, runnable });
    return { runnable };
  }

  /** The runnable, or undefined when the account has none with this id. */
  async find(accountId: string, id: string): Promise<Runnable | undefined> {
    const doc = await this.runnables.get(accountId, id);
    return doc && toRunnable(doc);
  }

  /**
   * Changes the given fields. A changed configuration (by its SHA-256) becomes a new version in the
   * history; the same text again adds none. A request that changes nothing writes nothing.
   */
  async update(accountId: string, id: string, input: UpdateRunnableInput, updatedBy: string): Promise<Runnable> {
    const fields = parseInput(updateRunnableInput, input);
    const config = await this.configFrom(accountId, fields.config_content, fields.config_content_parsed);
    for (let attempt = 1; ; attempt++) {
      const current = await this.getDoc(accountId, id);
      const configChanged = config !== undefined && config.config_content_sha256 !== current.config_content_sha256;
      const name = fields.name ?? current.name;
      const description = fields.description === undefined ? current.description : (fields.description ?? undefined);
      const tags = fields.tags === undefined ? current.tags : unique(fields.tags);
      const unchanged =
        !configChanged && name === current.name && description === current.description && sameList(tags, current.tags);
      if (unchanged) return toRunnable(current);
      const now = this.clock.now().toISOString();
      const { description: _description, ...withoutDescription } = current;
      const next: RunnableDoc = {
        ...withoutDescription,
        ...(configChanged ? config : {}),
        name,
        ...(description !== undefined ? { description } : {}),
        tags,
        updated_at: now,
        version: configChanged ? current.version + 1 : current.version,
        revision: current.revision + 1,
      };
      const ops: WriteOp[] = [this.runnables.replaceOp(next, { revision: current.revision })];
      if (configChanged) ops.push(this.versionOp(next, now, updatedBy));
      try {
        await this.database.write(ops);
        return toRunnable(next);
      } catch (error) {
        if (!(error instanceof WriteConflictError) || attempt === UPDATE_ATTEMPTS) throw conflictOr(error, id);
      }
    }
  }

  /** Deletes the runnable and its history. Runs keep their own copy of the configuration. */
  async delete(accountId: string, id: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.getDoc(accountId, id);
      const history = await this.versions.find(accountId, { where: { runnable_id: id } });
      try {
        await this.database.write([
          this.runnables.deleteOp(accountId, id, { revision: current.revision }),
          ...history.map((version) => this.versions.deleteOp(accountId, version.id)),
        ]);
        return;
      } catch (error) {
        if (!(error instanceof WriteConflictError) || attempt === UPDATE_ATTEMPTS) throw conflictOr(error, id);
      }
    }
  }

  /** The configuration history, version 1 first. */
  async listVersions(accountId: string, id: string): Promise<RunnableVersion[]> {
    await this.getDoc(accountId, id);
    const docs = await this.versions.find(accountId, { where: { runnable_id: id }, orderBy: [{ field: 'version' }] });
    return docs.map(toRunnableVersion);
  }

  private json(doc: RunnableDoc): string {
    const key = `${doc.id} ${doc.revision}`;
    let text = this.jsonTexts().get(key);
    if (text === undefined) {
      text = JSON.stringify(toRunnable(doc));
      this.jsonTexts().set(key, text);
    }
    return text;
  }

  private getDoc(accountId: string, id: string): Promise<RunnableDoc> {
    return this.runnables.require(accountId, id, `runnable ${id}`);
  }

  private versionOp(runnable: RunnableDoc, now: string, createdBy = runnable.created_by): WriteOp {
    return this.versions.insertOp({
      id: this.ids.newId(),
      account_id: runnable.account_id,
      runnable_id: runnable.id,
      version: runnable.version,
      config_content: runnable.config_content,
      config_content_sha256: runnable.config_content_sha256,
      created_at: now,
      created_by: createdBy,
    });
  }

  /**
   * Parses and derives the configuration from its text, or from an object written out as YAML;
   * undefined when neither is given. Invalid → 400 with the editor's diagnostics as `details`.
   */
  private async configFrom(
    accountId: string,
    content: string | undefined,
    parsedInput: Record<string, unknown> | undefined,
  ): Promise<StoredConfig | undefined> {
    if (content === undefined && parsedInput === undefined) return undefined;
    if (content === undefined) refuseTooDeep(parsedInput, 'body', 'config_content_parsed');
    const text = content ?? writeYaml(parsedInput!);
    const sha256 = this.hasher.sha256Hex(text);
    const result = await this.parseConfig(accountId, text, sha256);
    const errors = result.diagnostics.filter((diagnostic) => diagnostic.severity === 'error');
    if (!result.parsed || errors.length > 0) {
      const details: ErrorDetail[] = errors.map(({ severity: _severity, ...detail }) => detail);
      const first = errors[0]!;
      const source = content === undefined ? 'config_content_parsed' : 'config_content';
      throw DomainError.invalid(`invalid ${source}: ${first.path ? `${first.path}: ` : ''}${first.message}`, details);
    }
    return {
      config_content: text,
      config_content_parsed: result.parsed,
      config_content_type: result.type,
      config_content_sha256: sha256,
    };
  }

  /**
   * `parseRunnableConfig`, remembered by the text's hash, reading the text at most once. The
   * account's enabled providers are read only when a model's vendor cannot be told from the
   * configuration itself.
   */
  private async parseConfig(accountId: string, text: string, sha256: string): Promise<ParsedRunnableConfig> {
    let read: ReadRunnableConfig | undefined;
    const check = (enabledProviders?: string[]) => (read ??= readRunnableConfig(text)).check({ enabledProviders });
    const alone = this.parsedConfigs.getOrParse(sha256, text, () => check());
    if (!alone.usesEnabledProviders) return alone;
    const enabledProviders = await this.enabledProviders.list(accountId);
    return this.parsedConfigs.getOrParse(`${sha256} ${enabledProviders.join(',')}`, text, () => check(enabledProviders));
  }
}

/** The store query of a list: by type, by tags (all must be present), paged. */
function listQuery(filter: Partial<ListRunnablesQuery>): Query {
  const where: Where = {};
  if (filter.type) where.config_content_type = filter.type;
  if (filter.tags?.length) where.tags = { hasAll: filter.tags };
  return { where, limit: filter.limit, offset: filter.offset };
}

function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const result = schema.safeParse(input);
  if (!result.success) throw validationError(result.error);
  return result.data;
}

/** An object too deep to serialise is bad input, not a server error. */
function writeYaml(config: Record<string, unknown>): string {
  try {
    return formatRunnableConfig(config);
  } catch (error) {
    throw DomainError.invalid(`config_content_parsed cannot be written as YAML: ${(error as Error).message}`);
  }
}

function conflictOr(error: unknown, id: string): unknown {
  return error instanceof WriteConflictError ? DomainError.conflict(`runnable ${id} kept changing during the update; retry`) : error;
}

function sameList(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && left.every((value, index) => value === right[index]);
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** `value` with every object and array in it frozen: a record shared by its readers stays as stored. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const nested of Object.values(value)) deepFreeze(nested);
  }
  return value;
}
