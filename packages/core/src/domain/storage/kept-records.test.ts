import assert from 'node:assert/strict';
import { MemoryDatabase } from '../../adapters/memory/memory-database';
import type { Database } from '../../ports/database';
import { DomainError } from '../errors';
import { KeptRecords } from './kept-records';
import { type AccountRecord, Repository } from './repository';

interface Note extends AccountRecord {
  text: string;
  tags: string[];
}

const NOTES = 'notes';

describe('KeptRecords', () => {
  let database: MemoryDatabase;
  let notes: Repository<Note>;

  beforeEach(async () => {
    database = new MemoryDatabase();
    await database.migrate([{ id: 'test/001-notes', steps: [{ createCollection: NOTES, fields: {} }] }]);
    notes = new Repository<Note>(database, NOTES);
    await notes.insert({ id: 'n1', account_id: 'acct-a', text: 'first', tags: ['x'] });
  });

  it('answers the record as last written, whichever write changed the collection', async () => {
    const kept = new KeptRecords(notes, 10);
    assert.equal((await kept.get('acct-a', 'n1'))?.text, 'first');
    assert.equal((await kept.get('acct-a', 'n1'))?.text, 'first');
    await database.write([{ op: 'replace', collection: NOTES, doc: { id: 'n1', account_id: 'acct-a', text: 'second', tags: [] } }]);
    assert.equal((await kept.get('acct-a', 'n1'))?.text, 'second');
    await notes.insert({ id: 'n2', account_id: 'acct-a', text: 'other', tags: [] });
    await database.write([{ op: 'delete', collection: NOTES, id: 'n1' }]);
    assert.equal(await kept.get('acct-a', 'n1'), undefined);
  });

  it('treats another account’s record as missing, before and after the owner read it', async () => {
    const kept = new KeptRecords(notes, 10);
    assert.equal(await kept.get('acct-b', 'n1'), undefined);
    assert.equal((await kept.get('acct-a', 'n1'))?.text, 'first');
    assert.equal(await kept.get('acct-b', 'n1'), undefined);
    assert.equal((await kept.get('acct-a', 'n1'))?.text, 'first');
  });

  it('requires as Repository.require does: the record, or the same 404 for a missing id and another account’s', async () => {
    const kept = new KeptRecords(notes, 10);
    assert.equal((await kept.require('acct-a', 'n1', 'note n1')).text, 'first');
    for (const [accountId, id] of [['acct-b', 'n1'], ['acct-a', 'missing']] as const) {
      const fromStore = await notes.require(accountId, id, `note ${id}`).catch((error: unknown) => error);
      const fromKept = await kept.require(accountId, id, `note ${id}`).catch((error: unknown) => error);
      assert.ok(fromKept instanceof DomainError);
      assert.deepEqual([fromKept.code, fromKept.message], [(fromStore as DomainError).code, (fromStore as DomainError).message]);
    }
  });

  it('gives each caller its own copy: changing one answer changes no later one', async () => {
    const kept = new KeptRecords(notes, 10);
    const first = (await kept.get('acct-a', 'n1'))!;
    first.text = 'changed by its caller';
    first.tags.push('y');
    assert.deepEqual(await kept.get('acct-a', 'n1'), { id: 'n1', account_id: 'acct-a', text: 'first', tags: ['x'] });
  });

  it('answers records past its bound as the store does', async () => {
    const kept = new KeptRecords(notes, 2);
    for (const id of ['n2', 'n3', 'n4']) await notes.insert({ id, account_id: 'acct-a', text: id, tags: [] });
    for (const id of ['n1', 'n2', 'n3', 'n4', 'n1', 'n4']) assert.equal((await kept.get('acct-a', id))?.id, id);
  });

  it('reads the store every time when it gives no version (other processes write it)', async () => {
    const unversioned = new Proxy(database, {
      get: (target, key: keyof MemoryDatabase) => (key === 'collectionVersion' ? () => undefined : typeof target[key] === 'function' ? (target[key] as () => unknown).bind(target) : target[key]),
    }) as Database;
    const kept = new KeptRecords(new Repository<Note>(unversioned, NOTES), 10);
    assert.equal((await kept.get('acct-a', 'n1'))?.text, 'first');
    // What another process writes moves no version this handle sees: the answer must come from the store.
    await database.write([{ op: 'replace', collection: NOTES, doc: { id: 'n1', account_id: 'acct-a', text: 'from elsewhere', tags: [] } }]);
    assert.equal((await kept.get('acct-a', 'n1'))?.text, 'from elsewhere');
  });
});
