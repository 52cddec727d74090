import { inject, injectable } from 'inversify';
import { RunloomConfig } from '../../config';
import { DomainError } from '../errors';
import { tagSourceFailures, UploadInterruptedError } from '../input/upload-source';
import { BlobStore, BlobStoreError, BlobTooLargeError, type ByteRange, type StoredBlob } from '../../ports/blob-store';
import { Clock } from '../../ports/clock';
import { Database, DuplicateIdError, type WriteOp, WriteConflictError } from '../../ports/database';
import { IdGenerator } from '../../ports/id-generator';
import { Logger } from '../../ports/logger';
import { Repository } from '../storage/repository';
import { type BlobReference, RESOURCE_BLOBS_COLLECTION, RESOURCES_COLLECTION, type Resource } from './resource-record';
import { type NewResource, newResourceSchema, type ResourceListQuery, type ResourcePatch, resourcePatchSchema } from './resource-schemas';
import { ResourceUsage } from './resource-usage';

/**
 * Each retry follows a write that lost a race with another writer of the same record or content,
 * so under any real contention this is plenty; past it the caller is told to retry.
 */
const MAX_WRITE_ATTEMPTS = 32;

/** Content received into the blob store and not yet a resource: `create` it or `discard` it. */
export type ReceivedContent = StoredBlob;

/**
 * Stored resources (docs/api.md#resources): bytes in the `BlobStore`, records in the database.
 *
 * Identical content is stored once. The `resource_blobs` document of a content (id = sha256)
 * names its blob and counts the resources sharing it; every change of that count is written in
 * the same atomic batch as the resource it belongs to, with the count and key it read as
 * preconditions. So two deletes of the last two references free the blob exactly once (one of
 * them sees the other's decrement), and an upload racing the last delete either joins the blob
 * before the delete (which then keeps it) or finds no document and installs its own bytes — the
 * store never reuses a key, so the delete can only remove the old blob.
 */
@injectable()
export class ResourceService {
  private readonly resources: Repository<Resource>;

  constructor(
    @inject(Database) private readonly database: Database,
    @inject(BlobStore) private readonly blobs: BlobStore,
    @inject(ResourceUsage) private readonly usage: ResourceUsage,
    @inject(Clock) private readonly clock: Clock,
    @inject(IdGenerator) private readonly ids: IdGenerator,
    @inject(Logger) private readonly logger: Logger,
    @inject(RunloomConfig) private readonly config: RunloomConfig,
  ) {
    this.resources = new Repository<Resource>(database, RESOURCES_COLLECTION);
  }

  /** Stores `content` and makes it a resource of `accountId`. */
  async upload(accountId: string, input: NewResource, content: ReadableStream<Uint8Array>): Promise<Resource> {
    // Bad fields are refused before a byte is read.
    newResourceSchema().parse(input);
    return this.create(accountId, input, await this.receive(content));
  }

  /**
   * Streams `content` into the blob store, hashing it on the way, within the upload limit (413
   * past it, with nothing kept). For uploads whose fields arrive after the bytes.
   */
  async receive(content: ReadableStream<Uint8Array>): Promise<ReceivedContent> {
    try {
      return await this.blobs.put(tagSourceFailures(content), { maxBytes: this.config.uploadLimitBytes });
    } catch (error) {
      if (error instanceof BlobTooLargeError) {
        throw DomainError.tooLarge(`the content is over the upload limit of ${error.maxBytes} bytes`);
      }
      if (error instanceof UploadInterruptedError) throw DomainError.invalid(`the upload was cut off: ${error.message}`);
      if (error instanceof BlobStoreError) throw this.storeFailed(error);
      throw error;
    }
  }

  /** Makes received content a resource; the content is owned by the resource, or discarded on failure. */
  async create(accountId: string, input: NewResource, content: ReceivedContent): Promise<Resource> {
    try {
      const fields = newResourceSchema().parse(input);
      for (let attempt = 1; ; attempt += 1) {
        const shared = (await this.database.get(RESOURCE_BLOBS_COLLECTION, content.sha256)) as BlobReference | undefined;
        const now = this.clock.now().toISOString();
        const record: Resource = {
          id: this.ids.newId(),
          account_id: accountId,
          name: fields.name,
          directory_path: fields.directory_path,
          mime_type: fields.mime_type,
          sha256: content.sha256,
          original_uri: fields.original_uri,
          external_id: fields.external_id,
          external_storage_type: fields.external_storage_type,
          storage_bucket: shared?.storage_bucket ?? content.bucket,
          storage_key: shared?.storage_key ?? content.key,
          size_bytes: content.size,
          tags: fields.tags,
          metadata: fields.metadata,
          created_by: fields.created_by,
          created_at: now,
          updated_at: now,
        };
        const reference: WriteOp = shared
          ? {
              op: 'replace',
              collection: RESOURCE_BLOBS_COLLECTION,
              doc: { ...shared, refs: shared.refs + 1 },
              expect: { refs: shared.refs, storage_key: shared.storage_key },
            }
          : {
              op: 'insert',
              collection: RESOURCE_BLOBS_COLLECTION,
              doc: { id: content.sha256, storage_key: content.key, storage_bucket: content.bucket, refs: 1 },
            };
        if (!(await this.tryWrite([this.resources.insertOp(record), reference], attempt))) continue;
        // Joined an existing blob: these bytes are a duplicate.
        if (shared) await this.deleteBlob(content.key);
        return record;
      }
    } catch (error) {
      await this.deleteBlob(content.key);
      throw error;
    }
  }

  /** Drops received content that will not become a resource. */
  async discard(content: ReceivedContent): Promise<void> {
    await this.deleteBlob(content.key);
  }

  /** The account's resources, oldest first, filtered by directory and tags (all must match). */
  list(accountId: string, query: ResourceListQuery): Promise<Resource[]> {
    return this.resources.find(accountId, {
      where: {
        ...(query.directory_path === undefined ? {} : { directory_path: query.directory_path }),
        ...(query.tags?.length ? { tags: { hasAll: query.tags } } : {}),
      },
      orderBy: [{ field: 'created_at' }],
      limit: query.limit,
      offset: query.offset,
    });
  }

  /** The resource, or 404 (also for another account's id). */
  get(accountId: string, id: string): Promise<Resource> {
    return this.resources.require(accountId, id, `resource ${id}`);
  }

  /** The resource's bytes, or `range` of them (inclusive offsets within `size_bytes`). */
  async readContent(resource: Resource, range?: ByteRange): Promise<ReadableStream<Uint8Array>> {
    try {
      return await this.blobs.get(resource.storage_key, range);
    } catch (error) {
      if (error instanceof BlobStoreError) throw this.storeFailed(error);
      throw error;
    }
  }

  /** A failure of the blob store (S3 unreachable, say): told to the operators in the log, answered 503. */
  private storeFailed(error: BlobStoreError): DomainError {
    this.logger.error({ error: error.message }, 'the blob store failed');
    return DomainError.unavailable('the resource store is unavailable; retry later');
  }

  /** Replaces the given fields; the content, its hash and size never change. */
  async update(accountId: string, id: string, patch: ResourcePatch): Promise<Resource> {
    const changes = resourcePatchSchema.parse(patch);
    for (let attempt = 1; ; attempt += 1) {
      const current = await this.get(accountId, id);
      if (Object.keys(changes).length === 0) return current;
      const next: Resource = {
        ...current,
        ...changes,
        tags: changes.tags === undefined ? current.tags : (changes.tags ?? []),
        updated_at: laterThan(this.clock.now(), current.updated_at),
      };
      if (await this.tryWrite([this.resources.replaceOp(next, { updated_at: current.updated_at })], attempt)) return next;
    }
  }

  /** Deletes the resource, and its bytes when no other resource shares them. 409 while an active run embeds it. */
  async delete(accountId: string, id: string): Promise<{ id: string }> {
    for (let attempt = 1; ; attempt += 1) {
      const record = await this.get(accountId, id);
      if (await this.usage.isEmbeddedInActiveRun(accountId, id)) {
        throw DomainError.conflict(`resource ${id} is embedded in a queued or running run; delete it once the run has finished`);
      }
      const shared = (await this.database.get(RESOURCE_BLOBS_COLLECTION, record.sha256)) as BlobReference | undefined;
      const expect = { refs: shared?.refs ?? 0, storage_key: record.storage_key };
      const last = !shared || shared.refs <= 1;
      const ops: WriteOp[] = [this.resources.deleteOp(accountId, id)];
      if (shared && last) ops.push({ op: 'delete', collection: RESOURCE_BLOBS_COLLECTION, id: shared.id, expect });
      if (shared && !last) ops.push({ op: 'replace', collection: RESOURCE_BLOBS_COLLECTION, doc: { ...shared, refs: shared.refs - 1 }, expect });
      if (!(await this.tryWrite(ops, attempt))) continue;
      if (last) await this.deleteBlob(record.storage_key);
      return { id };
    }
  }

  /** Writes `ops`; false when a concurrent writer got there first and the caller should read again. */
  private async tryWrite(ops: WriteOp[], attempt: number): Promise<boolean> {
    try {
      await this.database.write(ops);
      return true;
    } catch (error) {
      if (!(error instanceof WriteConflictError || error instanceof DuplicateIdError)) throw error;
      if (attempt >= MAX_WRITE_ATTEMPTS) throw DomainError.conflict('the resource is being changed concurrently; retry');
      return false;
    }
  }

  /** A blob that cannot be removed is only wasted space: logged, never a failed request. */
  private async deleteBlob(key: string): Promise<void> {
    try {
      await this.blobs.delete(key);
    } catch (error) {
      this.logger.warn({ storage_key: key, error: (error as Error).message }, 'could not delete a resource blob');
    }
  }
}

/** Now, or a millisecond past `previous`: `updated_at` always moves, so it can guard a replace. */
function laterThan(now: Date, previous: string): string {
  const previousMs = Date.parse(previous);
  return new Date(Math.max(now.getTime(), previousMs + 1)).toISOString();
}
