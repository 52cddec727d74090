import { DomainError } from '../errors';
import type { AccountRecord, Repository } from './repository';
import { VersionedTexts } from './versioned-texts';

/**
 * `Repository.get` for records read far more often than their collection is written (a workspace,
 * read by every request on it): a record read is kept, by account and id, under the collection
 * version it was read at (`VersionedTexts`), and answered again while the version stays there,
 * when the store would answer the same. Kept as JSON, so each caller gets its own copy, as from
 * the store.
 */
export class KeptRecords<T extends AccountRecord> {
  private readonly kept: VersionedTexts;

  constructor(
    private readonly repository: Repository<T>,
    maxRecords: number,
  ) {
    this.kept = new VersionedTexts(maxRecords);
  }

  /** As `Repository.get`: undefined for a missing record and for another account's. */
  async get(accountId: string, id: string): Promise<T | undefined> {
    const version = this.repository.collectionVersion();
    // A store that keeps nothing (no version) answers as it is, without the JSON a kept copy needs.
    if (version === undefined) return this.repository.get(accountId, id);
    let read: T | undefined;
    // Keyed by account too: another account's id misses and goes to the store, which answers it missing.
    const json = await this.kept.keptUnder(JSON.stringify([accountId, id]), version, async () => {
      read = await this.repository.get(accountId, id);
      return read && JSON.stringify(read);
    });
    // A record just read from the store is already the caller's own copy.
    return read ?? (json === undefined ? undefined : (JSON.parse(json) as T));
  }

  /** As `Repository.require`: the record, or 404 naming `what`; another account's record is missing too. */
  async require(accountId: string, id: string, what: string): Promise<T> {
    const record = await this.get(accountId, id);
    if (!record) throw DomainError.notFound(what);
    return record;
  }
}
