import { LRUCache } from 'lru-cache';
import type { AccountRecord, Repository } from './repository';

/** Characters of record JSON kept at most (records with large metadata are read each time past it). */
const KEPT_CHARS = 8 * 1024 * 1024;

/**
 * `Repository.get` for records read far more often than their collection is written (a workspace,
 * read by every request on it): a record read is kept, by id, under the collection version it was
 * read at (`Database.collectionVersion`), and answered again while the version stays there, when
 * the store would answer the same. Any write to the collection moves the version and so ends every
 * kept record; a store shared with other processes (PostgreSQL) gives no version and keeps nothing.
 * Kept as JSON, so each caller gets its own copy, as from the store.
 */
export class KeptRecords<T extends AccountRecord> {
  private readonly kept: LRUCache<string, { version: number; accountId: string; json: string }>;

  constructor(
    private readonly repository: Repository<T>,
    maxRecords: number,
  ) {
    this.kept = new LRUCache({ max: maxRecords, maxSize: KEPT_CHARS, sizeCalculation: (entry, id) => entry.json.length + id.length });
  }

  /** As `Repository.get`: undefined for a missing record and for another account's. */
  async get(accountId: string, id: string): Promise<T | undefined> {
    // Read before the store: a write landing meanwhile moves it, so what is kept below under the
    // older version is never answered.
    const version = this.repository.collectionVersion();
    if (version === undefined) return this.repository.get(accountId, id);
    const kept = this.kept.get(id);
    // Another account's id goes to the store, which answers it missing.
    if (kept !== undefined && kept.version === version && kept.accountId === accountId) return JSON.parse(kept.json) as T;
    const record = await this.repository.get(accountId, id);
    if (record !== undefined) this.kept.set(id, { version, accountId, json: JSON.stringify(record) });
    return record;
  }
}
