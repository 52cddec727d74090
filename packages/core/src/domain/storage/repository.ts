import { DomainError } from '../errors';
import type { Database, Doc, Query, Where, WriteOp } from '../../ports/database';

/** A record that belongs to an account. */
export type AccountRecord = Doc & { account_id: string };

/**
 * Typed access to one collection of account-owned records. Reads take the caller's account and
 * treat another account's record exactly as a missing one, so isolation holds on every route.
 */
export class Repository<T extends AccountRecord> {
  constructor(
    private readonly database: Database,
    readonly collection: string,
  ) {}

  async get(accountId: string, id: string): Promise<T | undefined> {
    const doc = (await this.database.get(this.collection, id)) as T | undefined;
    return doc && doc.account_id === accountId ? doc : undefined;
  }

  /** The record, or 404 naming `what` (e.g. `run <id>`); another account's record is missing too. */
  async require(accountId: string, id: string, what: string): Promise<T> {
    const doc = await this.get(accountId, id);
    if (!doc) throw DomainError.notFound(what);
    return doc;
  }

  find(accountId: string, query: Query = {}): Promise<T[]> {
    return this.database.find(this.collection, { ...query, where: { ...query.where, account_id: accountId } }) as Promise<T[]>;
  }

  /** `Database.collectionVersion` of this collection: what an answer built from its reads may be kept under. */
  collectionVersion(): number | undefined {
    return this.database.collectionVersion(this.collection);
  }

  count(accountId: string, where: Where = {}): Promise<number> {
    return this.database.count(this.collection, { ...where, account_id: accountId });
  }

  insertOp(record: T): WriteOp {
    return { op: 'insert', collection: this.collection, doc: record };
  }

  /** Replaces a record of the same account; `expect` adds preconditions (e.g. a status). */
  replaceOp(record: T, expect: Where = {}): WriteOp {
    return { op: 'replace', collection: this.collection, doc: record, expect: { ...expect, account_id: record.account_id } };
  }

  deleteOp(accountId: string, id: string, expect: Where = {}): WriteOp {
    return { op: 'delete', collection: this.collection, id, expect: { ...expect, account_id: accountId } };
  }

  /** Fails the write it is part of unless the account's record `id` exists and matches `expect`. */
  checkOp(accountId: string, id: string, expect: Where): WriteOp {
    return { op: 'check', collection: this.collection, id, expect: { ...expect, account_id: accountId } };
  }

  insert(record: T): Promise<void> {
    return this.database.write([this.insertOp(record)]);
  }

  replace(record: T, expect?: Where): Promise<void> {
    return this.database.write([this.replaceOp(record, expect)]);
  }

  delete(accountId: string, id: string, expect?: Where): Promise<void> {
    return this.database.write([this.deleteOp(accountId, id, expect)]);
  }
}
