import { strict as assert } from 'node:assert';
import {
  type Database,
  type Doc,
  DuplicateIdError,
  type Migration,
  type Query,
  type WriteOp,
  WriteConflictError,
} from '../ports/database';

/** What a `Database` adapter's contract run needs: a fresh, empty store per test. */
export interface DatabaseUnderTest {
  database: Database;
  /**
   * For durable adapters: opens the same store again. The suite closes `database` first and uses
   * the returned handle from then on.
   */
  reopen?: () => Promise<Database>;
  /**
   * For stores several processes share: a handle of its own on the same store, as another
   * instance would open it. The suite closes it.
   */
  openAnother?: () => Promise<Database>;
  /** Closes whatever handle is still open and removes the store. */
  cleanup(): Promise<void>;
}

const ITEMS = 'items';
const NOTES = 'notes';
const itemsMigration: Migration = {
  id: 'contract/001-items',
  steps: [
    {
      createCollection: ITEMS,
      fields: { account_id: 'text', status: 'text', rank: 'integer', score: 'real', done: 'boolean', tags: 'json' },
    },
  ],
};

/** Documents covering every field type, absent and null values, for the query cases below. */
const fixtures: Doc[] = [
  { id: 'a1', account_id: 'acct-a', status: 'queued', rank: 3, score: 0.5, done: false, tags: ['red', 'blue'] },
  { id: 'a2', account_id: 'acct-a', status: 'running', rank: 1, score: 2.25, done: true, tags: ['red'] },
  { id: 'a3', account_id: 'acct-a', status: null, rank: 2, score: -1, done: false, tags: [] },
  { id: 'b1', account_id: 'acct-b', status: 'queued', rank: 5, score: 10, done: true, tags: ['blue', 'green', 'red'] },
  { id: 'b2', account_id: 'acct-b', rank: 4, done: false },
  { id: 'b3', account_id: 'acct-b', status: 'failed', rank: 3, score: 7.5, done: true, tags: ['green'] },
];

const ids = (docs: Doc[]): string[] => docs.map((doc) => doc.id);

/**
 * The one contract every `Database` adapter passes (memory, sql.js, PostgreSQL): each guarantee
 * of `ports/database.ts`, checked through the port alone.
 */
export function describeDatabaseContract(name: string, factory: () => Promise<DatabaseUnderTest>): void {
  describe(`Database contract: ${name}`, function () {
    this.timeout(30_000);
    let store: DatabaseUnderTest;
    let database: Database;

    beforeEach(async () => {
      store = await factory();
      database = store.database;
    });
    afterEach(async () => {
      await store.cleanup();
    });

    async function withFixtures(): Promise<void> {
      await database.migrate([itemsMigration]);
      await database.write(fixtures.map((doc) => ({ op: 'insert', collection: ITEMS, doc })));
    }

    async function findIds(query: Query): Promise<string[]> {
      return ids(await database.find(ITEMS, query));
    }

    describe('migrate', () => {
      it('applies migrations in the order given, within one call', async () => {
        await database.migrate([
          itemsMigration,
          { id: 'contract/002-items-color', steps: [{ addField: { collection: ITEMS, field: 'color', type: 'text' } }] },
        ]);
        await database.write([{ op: 'insert', collection: ITEMS, doc: { id: 'x', color: 'red' } }]);
        assert.deepEqual(ids(await database.find(ITEMS, { where: { color: 'red' } })), ['x']);
      });

      it('is idempotent: re-running keeps the data and skips every recorded migration id', async () => {
        await withFixtures();
        await database.migrate([itemsMigration]);
        assert.equal(await database.count(ITEMS), fixtures.length);
        // The same id with different steps is not applied again: the id is what is recorded.
        await database.migrate([{ id: itemsMigration.id, steps: [...itemsMigration.steps, { createCollection: 'never', fields: {} }] }]);
        await assert.rejects(database.find('never'));
        assert.equal(await database.count(ITEMS), fixtures.length);
      });

      it('addField makes a field of already stored documents queryable', async () => {
        await withFixtures();
        await database.write([
          { op: 'insert', collection: ITEMS, doc: { id: 'c1', color: 'red' } },
          { op: 'insert', collection: ITEMS, doc: { id: 'c2', color: 'blue' } },
          { op: 'insert', collection: ITEMS, doc: { id: 'c3', color: 'red', nested: { deep: true } } },
        ]);
        await database.migrate([
          itemsMigration,
          { id: 'contract/002-items-color', steps: [{ addField: { collection: ITEMS, field: 'color', type: 'text' } }] },
        ]);
        assert.deepEqual(await findIds({ where: { color: 'red' } }), ['c1', 'c3']);
        assert.equal(await database.count(ITEMS, { color: 'blue' }), 1);
        assert.equal(await database.count(ITEMS, { color: null }), fixtures.length);
        assert.deepEqual(await findIds({ where: { color: { ne: null } }, orderBy: [{ field: 'color' }] }), ['c2', 'c1', 'c3']);
        assert.deepEqual(await database.get(ITEMS, 'c3'), { id: 'c3', color: 'red', nested: { deep: true } });
      });

      it('unindexField leaves the field declared: queries, orders, counts and expects on it answer as before', async () => {
        await withFixtures();
        const unindexed: Migration = { id: 'contract/002-items-unindexed', steps: [{ unindexField: { collection: ITEMS, field: 'rank' } }, { unindexField: { collection: ITEMS, field: 'tags' } }] };
        await database.migrate([itemsMigration, unindexed]);
        await database.migrate([itemsMigration, unindexed]);
        assert.deepEqual(await findIds({ where: { rank: { gte: 3 } }, orderBy: [{ field: 'rank', direction: 'desc' }] }), ['b1', 'b2', 'a1', 'b3']);
        assert.deepEqual(await findIds({ where: { tags: { hasAll: ['red', 'blue'] } } }), ['a1', 'b1']);
        assert.equal(await database.count(ITEMS, { rank: 3 }), 2);
        await assert.rejects(database.write([{ op: 'replace', collection: ITEMS, doc: { id: 'a2', rank: 9 }, expect: { rank: 2 } }]), WriteConflictError);
        await database.write([{ op: 'replace', collection: ITEMS, doc: { id: 'a2', rank: 9 }, expect: { rank: 1 } }]);
        await database.write([{ op: 'insert', collection: ITEMS, doc: { id: 'c1', rank: 9 } }]);
        assert.deepEqual(await findIds({ where: { rank: 9 } }), ['a2', 'c1']);
      });

      it('creates collections that are empty and independent', async () => {
        await database.migrate([itemsMigration, { id: 'contract/003-others', steps: [{ createCollection: 'others', fields: { rank: 'integer' } }] }]);
        await database.write([{ op: 'insert', collection: 'others', doc: { id: 'a1', rank: 1 } }]);
        assert.equal(await database.count(ITEMS), 0);
        assert.equal(await database.get(ITEMS, 'a1'), undefined);
        assert.deepEqual(await database.get('others', 'a1'), { id: 'a1', rank: 1 });
      });
    });

    describe('reads', () => {
      beforeEach(withFixtures);

      it('get returns the stored document, or undefined for a missing id', async () => {
        assert.deepEqual(await database.get(ITEMS, 'b2'), fixtures[4]);
        assert.equal(await database.get(ITEMS, 'zz'), undefined);
      });

      it('find without a query returns every document in id order', async () => {
        assert.deepEqual(await database.find(ITEMS), [...fixtures].sort((a, b) => (a.id < b.id ? -1 : 1)));
      });

      it('count counts all or the matching documents', async () => {
        assert.equal(await database.count(ITEMS), 6);
        assert.equal(await database.count(ITEMS, {}), 6);
        assert.equal(await database.count(ITEMS, { account_id: 'acct-b', done: true }), 2);
        assert.equal(await database.count(ITEMS, { account_id: 'acct-c' }), 0);
      });

      it('equality on text, integer, real and boolean fields', async () => {
        assert.deepEqual(await findIds({ where: { status: 'queued' } }), ['a1', 'b1']);
        assert.deepEqual(await findIds({ where: { rank: 3 } }), ['a1', 'b3']);
        assert.deepEqual(await findIds({ where: { score: 2.25 } }), ['a2']);
        assert.deepEqual(await findIds({ where: { done: true } }), ['a2', 'b1', 'b3']);
        assert.deepEqual(await findIds({ where: { done: false } }), ['a1', 'a3', 'b2']);
        assert.deepEqual(await findIds({ where: { id: 'b3' } }), ['b3']);
      });

      it('equality with null matches null and absent values', async () => {
        assert.deepEqual(await findIds({ where: { status: null } }), ['a3', 'b2']);
        assert.deepEqual(await findIds({ where: { score: null } }), ['b2']);
        assert.deepEqual(await findIds({ where: { tags: null } }), ['b2']);
      });

      it('several conditions all have to hold', async () => {
        assert.deepEqual(await findIds({ where: { account_id: 'acct-a', done: false, rank: { gte: 3 } } }), ['a1']);
      });

      it('in matches any of the values, and an empty list matches nothing', async () => {
        assert.deepEqual(await findIds({ where: { status: { in: ['running', 'failed'] } } }), ['a2', 'b3']);
        assert.deepEqual(await findIds({ where: { rank: { in: [1, 5, 99] } } }), ['a2', 'b1']);
        assert.deepEqual(await findIds({ where: { id: { in: ['b1', 'a1', 'zz'] } } }), ['a1', 'b1']);
        assert.deepEqual(await findIds({ where: { status: { in: [] } } }), []);
        assert.equal(await database.count(ITEMS, { status: { in: [] } }), 0);
      });

      it('hasAll on a json array field matches documents holding every given value', async () => {
        assert.deepEqual(await findIds({ where: { tags: { hasAll: ['red'] } } }), ['a1', 'a2', 'b1']);
        assert.deepEqual(await findIds({ where: { tags: { hasAll: ['red', 'blue'] } } }), ['a1', 'b1']);
        assert.deepEqual(await findIds({ where: { tags: { hasAll: ['green', 'red', 'blue'] } } }), ['b1']);
        assert.deepEqual(await findIds({ where: { tags: { hasAll: ['purple'] } } }), []);
        assert.equal(await database.count(ITEMS, { tags: { hasAll: ['green'] } }), 2);
      });

      it('hasAll takes lists of any length (a query of fixed size: no expression per value)', async () => {
        const repeated = Array.from({ length: 5000 }, (_, index) => (index % 2 ? 'red' : 'blue'));
        assert.deepEqual(await findIds({ where: { tags: { hasAll: repeated } } }), ['a1', 'b1']);
        const missing = ['red', ...Array.from({ length: 5000 }, (_, index) => `absent-${index}`)];
        assert.deepEqual(await findIds({ where: { tags: { hasAll: missing } } }), []);
        assert.equal(await database.count(ITEMS, { tags: { hasAll: repeated } }), 2);
      });

      it('lt, lte, gt and gte compare numbers and strings, never matching null or absent', async () => {
        assert.deepEqual(await findIds({ where: { rank: { lt: 3 } } }), ['a2', 'a3']);
        assert.deepEqual(await findIds({ where: { rank: { lte: 3 } } }), ['a1', 'a2', 'a3', 'b3']);
        assert.deepEqual(await findIds({ where: { rank: { gt: 3 } } }), ['b1', 'b2']);
        assert.deepEqual(await findIds({ where: { rank: { gte: 4 } } }), ['b1', 'b2']);
        assert.deepEqual(await findIds({ where: { score: { lt: 0.5 } } }), ['a3']);
        assert.deepEqual(await findIds({ where: { score: { gte: 0.5 }, rank: { lt: 5 } } }), ['a1', 'a2', 'b3']);
        assert.deepEqual(await findIds({ where: { status: { gt: 'queued' } } }), ['a2']);
        assert.deepEqual(await findIds({ where: { status: { lte: 'queued' } } }), ['a1', 'b1', 'b3']);
        assert.deepEqual(await findIds({ where: { id: { gt: 'a3' } } }), ['b1', 'b2', 'b3']);
      });

      it('ne matches every other value, including null and absent, and ne null matches present values', async () => {
        assert.deepEqual(await findIds({ where: { status: { ne: 'queued' } } }), ['a2', 'a3', 'b2', 'b3']);
        assert.deepEqual(await findIds({ where: { status: { ne: null } } }), ['a1', 'a2', 'b1', 'b3']);
        assert.deepEqual(await findIds({ where: { rank: { ne: 3 } } }), ['a2', 'a3', 'b1', 'b2']);
        assert.deepEqual(await findIds({ where: { done: { ne: true } } }), ['a1', 'a3', 'b2']);
      });

      it('orderBy sorts ascending by default, descending on request, ties by id ascending', async () => {
        assert.deepEqual(await findIds({ orderBy: [{ field: 'rank' }] }), ['a2', 'a3', 'a1', 'b3', 'b2', 'b1']);
        assert.deepEqual(await findIds({ orderBy: [{ field: 'rank', direction: 'desc' }] }), ['b1', 'b2', 'a1', 'b3', 'a3', 'a2']);
        assert.deepEqual(await findIds({ orderBy: [{ field: 'done', direction: 'desc' }] }), ['a2', 'b1', 'b3', 'a1', 'a3', 'b2']);
        assert.deepEqual(
          await findIds({ orderBy: [{ field: 'account_id', direction: 'desc' }, { field: 'score', direction: 'asc' }] }),
          ['b2', 'b3', 'b1', 'a3', 'a1', 'a2'],
        );
        assert.deepEqual(await findIds({ orderBy: [{ field: 'id', direction: 'desc' }] }), ['b3', 'b2', 'b1', 'a3', 'a2', 'a1']);
      });

      it('orderBy puts null and absent values first ascending and last descending', async () => {
        assert.deepEqual(await findIds({ orderBy: [{ field: 'status' }] }), ['a3', 'b2', 'b3', 'a1', 'b1', 'a2']);
        assert.deepEqual(await findIds({ orderBy: [{ field: 'status', direction: 'desc' }] }), ['a2', 'a1', 'b1', 'b3', 'a3', 'b2']);
      });

      it('limit and offset page through the ordered matches', async () => {
        assert.deepEqual(await findIds({ limit: 2 }), ['a1', 'a2']);
        assert.deepEqual(await findIds({ limit: 2, offset: 2 }), ['a3', 'b1']);
        assert.deepEqual(await findIds({ offset: 4 }), ['b2', 'b3']);
        assert.deepEqual(await findIds({ offset: 10 }), []);
        assert.deepEqual(await findIds({ limit: 0 }), []);
        assert.deepEqual(
          await findIds({ where: { account_id: 'acct-b' }, orderBy: [{ field: 'rank', direction: 'desc' }], limit: 2, offset: 1 }),
          ['b2', 'b3'],
        );
      });
    });

    describe('write', () => {
      beforeEach(withFixtures);

      it('replace stores the new document and its fields become the queried values', async () => {
        await database.write([{ op: 'replace', collection: ITEMS, doc: { id: 'a1', account_id: 'acct-a', status: 'done', rank: 9 } }]);
        assert.deepEqual(await database.get(ITEMS, 'a1'), { id: 'a1', account_id: 'acct-a', status: 'done', rank: 9 });
        assert.deepEqual(await findIds({ where: { status: 'queued' } }), ['b1']);
        assert.deepEqual(await findIds({ where: { status: 'done' } }), ['a1']);
        assert.deepEqual(await findIds({ where: { tags: { hasAll: ['red'] } } }), ['a2', 'b1']);
      });

      it('delete removes the document', async () => {
        await database.write([{ op: 'delete', collection: ITEMS, id: 'b2' }]);
        assert.equal(await database.get(ITEMS, 'b2'), undefined);
        assert.equal(await database.count(ITEMS), 5);
      });

      it('insert of an existing id fails with DuplicateIdError naming it', async () => {
        const error = await database.write([{ op: 'insert', collection: ITEMS, doc: { id: 'a2', status: 'other' } }]).then(
          () => assert.fail('insert of an existing id succeeded'),
          (failure: unknown) => failure,
        );
        assert.ok(error instanceof DuplicateIdError, String(error));
        assert.equal(error.collection, ITEMS);
        assert.equal(error.id, 'a2');
        assert.deepEqual(await database.get(ITEMS, 'a2'), fixtures[1]);
      });

      it('expect preconditions that hold let replace and delete through', async () => {
        await database.write([
          { op: 'replace', collection: ITEMS, doc: { ...fixtures[0]!, status: 'running' }, expect: { status: 'queued', account_id: 'acct-a' } },
          { op: 'replace', collection: ITEMS, doc: { ...fixtures[2]!, status: 'queued' }, expect: { status: null, rank: { in: [1, 2] } } },
          { op: 'delete', collection: ITEMS, id: 'b3', expect: { status: { ne: 'queued' }, done: true } },
        ]);
        assert.equal((await database.get(ITEMS, 'a1'))?.status, 'running');
        assert.equal((await database.get(ITEMS, 'a3'))?.status, 'queued');
        assert.equal(await database.get(ITEMS, 'b3'), undefined);
      });

      it('an expect that does not hold fails with WriteConflictError and changes nothing', async () => {
        const error = await database
          .write([{ op: 'replace', collection: ITEMS, doc: { ...fixtures[0]!, status: 'running' }, expect: { status: 'running' } }])
          .then(
            () => assert.fail('replace with a failing expect succeeded'),
            (failure: unknown) => failure,
          );
        assert.ok(error instanceof WriteConflictError, String(error));
        assert.equal(error.collection, ITEMS);
        assert.equal(error.id, 'a1');
        await assert.rejects(database.write([{ op: 'delete', collection: ITEMS, id: 'b1', expect: { account_id: 'acct-a' } }]), WriteConflictError);
        await assert.rejects(database.write([{ op: 'delete', collection: ITEMS, id: 'a2', expect: { tags: { hasAll: ['green'] } } }]), WriteConflictError);
        assert.deepEqual(await database.find(ITEMS), fixtures);
      });

      it('replace or delete of a missing document fails with WriteConflictError', async () => {
        await assert.rejects(database.write([{ op: 'replace', collection: ITEMS, doc: { id: 'zz', status: 'x' } }]), (error: unknown) => {
          assert.ok(error instanceof WriteConflictError);
          assert.equal(error.id, 'zz');
          return true;
        });
        await assert.rejects(database.write([{ op: 'delete', collection: ITEMS, id: 'zz' }]), WriteConflictError);
        await assert.rejects(database.write([{ op: 'delete', collection: ITEMS, id: 'zz', expect: { status: null } }]), WriteConflictError);
        assert.equal(await database.get(ITEMS, 'zz'), undefined);
      });

      it('a batch with one failing op leaves nothing of the batch applied', async () => {
        const before = await database.find(ITEMS);
        const failingBatches: { ops: WriteOp[]; error: typeof WriteConflictError | typeof DuplicateIdError }[] = [
          {
            ops: [
              { op: 'insert', collection: ITEMS, doc: { id: 'n1', status: 'new' } },
              { op: 'replace', collection: ITEMS, doc: { id: 'a1', status: 'changed' } },
              { op: 'delete', collection: ITEMS, id: 'b1' },
              { op: 'replace', collection: ITEMS, doc: { id: 'a2', status: 'changed' }, expect: { status: 'queued' } },
            ],
            error: WriteConflictError,
          },
          {
            ops: [
              { op: 'delete', collection: ITEMS, id: 'a3' },
              { op: 'insert', collection: ITEMS, doc: { id: 'n2' } },
              { op: 'insert', collection: ITEMS, doc: { id: 'n2' } },
            ],
            error: DuplicateIdError,
          },
          {
            ops: [
              { op: 'insert', collection: ITEMS, doc: { id: 'n3' } },
              { op: 'delete', collection: ITEMS, id: 'n3' },
              { op: 'delete', collection: ITEMS, id: 'n3' },
            ],
            error: WriteConflictError,
          },
        ];
        for (const { ops, error } of failingBatches) {
          await assert.rejects(database.write(ops), error);
          assert.deepEqual(await database.find(ITEMS), before);
        }
        assert.equal(await database.count(ITEMS, { status: 'changed' }), 0);
      });

      it('later ops of a batch see the earlier ones', async () => {
        await database.write([
          { op: 'insert', collection: ITEMS, doc: { id: 'n1', status: 'new' } },
          { op: 'replace', collection: ITEMS, doc: { id: 'n1', status: 'ready' }, expect: { status: 'new' } },
          { op: 'delete', collection: ITEMS, id: 'a1' },
          { op: 'insert', collection: ITEMS, doc: { id: 'a1', status: 'reborn' } },
        ]);
        assert.deepEqual(await database.get(ITEMS, 'n1'), { id: 'n1', status: 'ready' });
        assert.deepEqual(await database.get(ITEMS, 'a1'), { id: 'a1', status: 'reborn' });
      });

      it('an empty batch is a no-op', async () => {
        await database.write([]);
        assert.equal(await database.count(ITEMS), fixtures.length);
      });

      it('onApplied runs once the write is visible, before it resolves, and a write it starts lands after it; never for a write that fails', async () => {
        const events: string[] = [];
        let seen: Promise<Doc | undefined> | undefined;
        let next: Promise<void> | undefined;
        await database
          .write([{ op: 'insert', collection: ITEMS, doc: { id: 'n1', status: 'new' } }], {
            onApplied: () => {
              events.push('applied');
              seen = database.get(ITEMS, 'n1');
              next = database.write([{ op: 'replace', collection: ITEMS, doc: { id: 'n1', status: 'next' }, expect: { status: 'new' } }]);
            },
          })
          .then(() => events.push('resolved'));
        await next;
        assert.deepEqual(events, ['applied', 'resolved']);
        assert.notEqual(await seen, undefined);
        assert.deepEqual(await database.get(ITEMS, 'n1'), { id: 'n1', status: 'next' });
        let applied = false;
        const onApplied = (): void => {
          applied = true;
        };
        await assert.rejects(database.write([{ op: 'insert', collection: ITEMS, doc: { id: 'a1' } }], { onApplied }), DuplicateIdError);
        await assert.rejects(database.write([{ op: 'delete', collection: ITEMS, id: 'a2', expect: { status: 'queued' } }], { onApplied }), WriteConflictError);
        assert.equal(applied, false);
      });

      it('concurrent writes all land and no reader sees part of a batch', async () => {
        const pairs = 60;
        const seen: number[] = [];
        const writes = Array.from({ length: pairs }, (_, index) =>
          database.write([
            { op: 'insert', collection: ITEMS, doc: { id: `left-${index}`, status: 'pair' } },
            { op: 'replace', collection: ITEMS, doc: { ...fixtures[0]!, rank: index }, expect: { id: 'a1' } },
            { op: 'insert', collection: ITEMS, doc: { id: `right-${index}`, status: 'pair' } },
          ]),
        );
        const reads = Array.from({ length: pairs }, async () => seen.push(await database.count(ITEMS, { status: 'pair' })));
        await Promise.all([...writes, ...reads]);
        for (const count of seen) assert.equal(count % 2, 0, `a reader saw ${count} halves of pairs`);
        assert.equal(await database.count(ITEMS, { status: 'pair' }), pairs * 2);
      });

      // Adapters may commit concurrent writes together (group commit): each write still stands alone.
      it('concurrent writes fail alone: a failing write rejects with its own error and the others land', async () => {
        await database.migrate([{ id: 'contract/003-notes', steps: [{ createCollection: NOTES, fields: { item_id: 'text' } }] }]);
        const good = (index: number): WriteOp[] => [
          { op: 'insert', collection: ITEMS, doc: { id: `good-${index}`, status: 'good' } },
          { op: 'insert', collection: NOTES, doc: { id: `note-${index}`, item_id: `good-${index}` } },
        ];
        const failing: { ops: WriteOp[]; error: typeof WriteConflictError | typeof DuplicateIdError }[] = [
          // Inserts only, into two collections, the second a duplicate: the first must not land.
          { ops: [{ op: 'insert', collection: NOTES, doc: { id: 'orphan-note' } }, { op: 'insert', collection: ITEMS, doc: { id: 'a1' } }], error: DuplicateIdError },
          { ops: [{ op: 'insert', collection: ITEMS, doc: { id: 'bad-1', status: 'bad' } }, { op: 'insert', collection: ITEMS, doc: { id: 'bad-1' } }], error: DuplicateIdError },
          {
            ops: [
              { op: 'insert', collection: ITEMS, doc: { id: 'bad-2', status: 'bad' } },
              { op: 'replace', collection: ITEMS, doc: { id: 'a2', status: 'bad' }, expect: { status: 'queued' } },
            ],
            error: WriteConflictError,
          },
          { ops: [{ op: 'delete', collection: ITEMS, id: 'missing' }], error: WriteConflictError },
        ];
        const outcomes = await Promise.allSettled([
          ...Array.from({ length: 20 }, (_, index) => database.write(good(index))),
          ...failing.map(({ ops }) => database.write(ops)),
          ...Array.from({ length: 20 }, (_, index) => database.write(good(20 + index))),
          database.write([{ op: 'replace', collection: ITEMS, doc: { ...fixtures[1]!, status: 'good' }, expect: { status: 'running' } }]),
        ]);
        const rejected = outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error) : undefined));
        assert.deepEqual(rejected.slice(0, 20), Array(20).fill(undefined));
        assert.deepEqual(rejected.slice(24), Array(21).fill(undefined));
        failing.forEach(({ error }, index) => assert.ok(rejected[20 + index] instanceof error, `failing write ${index}: ${String(rejected[20 + index])}`));
        assert.equal(await database.count(ITEMS, { status: 'good' }), 41);
        assert.equal(await database.count(NOTES), 40);
        assert.equal(await database.count(ITEMS, { status: 'bad' }), 0);
        assert.equal(await database.get(NOTES, 'orphan-note'), undefined);
        assert.deepEqual(await database.get(ITEMS, 'a1'), fixtures[0]);
      });

      it('concurrent writes racing on one precondition: exactly one wins, the rest conflict', async () => {
        const outcomes = await Promise.allSettled(
          Array.from({ length: 12 }, (_, index) =>
            database.write([
              { op: 'replace', collection: ITEMS, doc: { ...fixtures[0]!, status: `winner-${index}` }, expect: { status: 'queued' } },
              { op: 'insert', collection: ITEMS, doc: { id: `claim-${index}` } },
            ]),
          ),
        );
        const won = outcomes.flatMap((outcome, index) => (outcome.status === 'fulfilled' ? [index] : []));
        assert.equal(won.length, 1);
        for (const outcome of outcomes) if (outcome.status === 'rejected') assert.ok(outcome.reason instanceof WriteConflictError);
        assert.equal((await database.get(ITEMS, 'a1'))!.status, `winner-${won[0]}`);
        assert.deepEqual(await findIds({ where: { id: { in: Array.from({ length: 12 }, (_, index) => `claim-${index}`) } } }), [`claim-${won[0]}`]);
      });
    });

    describe('check', () => {
      beforeEach(withFixtures);

      it('lets its write through when the document matches, and changes nothing itself', async () => {
        const before = database.collectionVersion(ITEMS);
        await database.write([{ op: 'check', collection: ITEMS, id: 'a1', expect: { status: 'queued', rank: { gte: 3 } } }]);
        assert.equal(database.collectionVersion(ITEMS), before);
        await database.write([
          { op: 'check', collection: ITEMS, id: 'a1', expect: { status: 'queued' } },
          { op: 'check', collection: ITEMS, id: 'a1', expect: { account_id: 'acct-a' } },
          { op: 'insert', collection: ITEMS, doc: { id: 'n1', status: 'new' } },
        ]);
        assert.deepEqual(await database.get(ITEMS, 'n1'), { id: 'n1', status: 'new' });
        assert.deepEqual(await database.get(ITEMS, 'a1'), fixtures[0]);
      });

      it('that does not hold, or names a missing document, fails the whole write with WriteConflictError', async () => {
        const failing: WriteOp[] = [
          { op: 'check', collection: ITEMS, id: 'a1', expect: { status: 'running' } },
          { op: 'check', collection: ITEMS, id: 'zz', expect: {} },
          { op: 'check', collection: ITEMS, id: 'zz', expect: { status: null } },
        ];
        for (const check of failing) {
          await assert.rejects(
            database.write([
              { op: 'insert', collection: ITEMS, doc: { id: 'n1', status: 'new' } },
              { op: 'replace', collection: ITEMS, doc: { ...fixtures[1]!, status: 'changed' } },
              check,
            ]),
            (error: unknown) => {
              assert.ok(error instanceof WriteConflictError, String(error));
              assert.equal(error.id, check.op === 'check' ? check.id : undefined);
              return true;
            },
          );
          await assert.rejects(database.write([check]), WriteConflictError);
        }
        assert.deepEqual(await database.find(ITEMS), fixtures);
      });

      it('sees the earlier ops of its batch', async () => {
        await database.write([
          { op: 'replace', collection: ITEMS, doc: { ...fixtures[0]!, status: 'running' } },
          { op: 'check', collection: ITEMS, id: 'a1', expect: { status: 'running' } },
        ]);
        await assert.rejects(
          database.write([
            { op: 'delete', collection: ITEMS, id: 'b1' },
            { op: 'check', collection: ITEMS, id: 'b1', expect: {} },
          ]),
          WriteConflictError,
        );
        assert.equal((await database.get(ITEMS, 'b1'))?.status, 'queued');
      });

      it('concurrent checks of one document all pass, each write failing or landing alone', async () => {
        const outcomes = await Promise.allSettled(
          Array.from({ length: 20 }, (_, index) =>
            database.write([
              { op: 'check', collection: ITEMS, id: 'a1', expect: { status: index % 4 === 3 ? 'running' : 'queued' } },
              { op: 'insert', collection: ITEMS, doc: { id: `claim-${index}`, status: 'claim' } },
            ]),
          ),
        );
        outcomes.forEach((outcome, index) => {
          if (index % 4 === 3) assert.ok(outcome.status === 'rejected' && outcome.reason instanceof WriteConflictError, `write ${index}`);
          else assert.equal(outcome.status, 'fulfilled', `write ${index}`);
        });
        assert.equal(await database.count(ITEMS, { status: 'claim' }), 15);
      });

      // Two writes, each checking the document the other replaces: run one after the other, the
      // second's check fails, whatever their order. Both landing would mean a check read a state
      // that a concurrent write had already left (write skew). Shared adapters: from two handles.
      it('is atomic with a concurrent replace of its document: of two writes checking what the other replaces, one fails', async () => {
        const other = store.openAnother ? await store.openAnother() : database;
        try {
          if (other !== database) await other.migrate([itemsMigration]);
          for (let round = 0; round < 10; round += 1) {
            const [a1, b1] = await Promise.all([database.get(ITEMS, 'a1'), database.get(ITEMS, 'b1')]);
            const outcomes = await Promise.allSettled([
              database.write([
                { op: 'check', collection: ITEMS, id: 'a1', expect: { rank: a1!.rank as number } },
                { op: 'replace', collection: ITEMS, doc: { ...b1!, rank: (b1!.rank as number) + 1 }, expect: { rank: b1!.rank as number } },
              ]),
              other.write([
                { op: 'check', collection: ITEMS, id: 'b1', expect: { rank: b1!.rank as number } },
                { op: 'replace', collection: ITEMS, doc: { ...a1!, rank: (a1!.rank as number) + 1 }, expect: { rank: a1!.rank as number } },
              ]),
            ]);
            const landed = outcomes.filter((outcome) => outcome.status === 'fulfilled').length;
            assert.equal(landed, 1, `round ${round}: ${landed} of the two writes landed`);
            for (const outcome of outcomes) if (outcome.status === 'rejected') assert.ok(outcome.reason instanceof WriteConflictError, String(outcome.reason));
          }
        } finally {
          if (other !== database) await other.close();
        }
      });
    });

    it('says the store is shared exactly when another handle can open it', () => {
      assert.equal(database.shared, store.openAnother !== undefined);
    });

    describe('collectionVersion', () => {
      const writes: WriteOp[][] = [
        [{ op: 'insert', collection: ITEMS, doc: { id: 'v1', status: 'new' } }],
        [{ op: 'replace', collection: ITEMS, doc: { ...fixtures[0]!, status: 'replaced' } }],
        [{ op: 'delete', collection: ITEMS, id: 'b2' }],
        [
          { op: 'insert', collection: NOTES, doc: { id: 'note-v' } },
          { op: 'replace', collection: ITEMS, doc: { ...fixtures[1]!, rank: 9 } },
        ],
      ];

      it('moves with every insert, replace and delete of the collection and stays through reads, or is undefined throughout', async () => {
        await withFixtures();
        await database.migrate([{ id: 'contract/003-notes', steps: [{ createCollection: NOTES, fields: { item_id: 'text' } }] }]);
        const seen = [database.collectionVersion(ITEMS)];
        await database.find(ITEMS, { where: { status: 'queued' } });
        await database.get(ITEMS, 'a1');
        await database.count(ITEMS);
        assert.equal(database.collectionVersion(ITEMS), seen[0]);
        for (const ops of writes) {
          await database.write(ops);
          seen.push(database.collectionVersion(ITEMS));
        }
        if (seen[0] === undefined) assert.deepEqual(seen, seen.map(() => undefined));
        else assert.equal(new Set(seen).size, seen.length, `versions ${seen.join(', ')}`);
      });

      it('has moved by the time a reader can see a write', async () => {
        await withFixtures();
        const before = database.collectionVersion(ITEMS);
        const writing = database.write([{ op: 'insert', collection: ITEMS, doc: { id: 'seen-early' } }]);
        const early = await database.get(ITEMS, 'seen-early');
        if (early !== undefined && before !== undefined) assert.notEqual(database.collectionVersion(ITEMS), before);
        await writing;
        if (before !== undefined) assert.notEqual(database.collectionVersion(ITEMS), before);
      });

      it('moves with writes through another handle, or is undefined (shared adapters)', async function () {
        if (!store.openAnother) this.skip();
        await withFixtures();
        const other = await store.openAnother();
        try {
          await other.migrate([itemsMigration]);
          const before = database.collectionVersion(ITEMS);
          await other.write(writes[0]!);
          assert.ok(before === undefined || database.collectionVersion(ITEMS) !== before, 'a write through another handle left the version as it was');
        } finally {
          await other.close();
        }
      });
    });

    it('every acknowledged concurrent write survives close and reopen (durable adapters)', async function () {
      if (!store.reopen) this.skip();
      await withFixtures();
      await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          database.write([
            { op: 'insert', collection: ITEMS, doc: { id: `c-${index}`, status: 'concurrent' } },
            ...(index % 5 === 0 ? [{ op: 'replace' as const, collection: ITEMS, doc: { ...fixtures[3]!, rank: index } }] : []),
          ]),
        ),
      );
      const before = await database.find(ITEMS);
      await database.close();
      database = await store.reopen();
      await database.migrate([itemsMigration]);
      assert.deepEqual(await database.find(ITEMS), before);
      assert.equal(await database.count(ITEMS, { status: 'concurrent' }), 50);
    });

    it('returns documents equal to what was stored (nested values, unicode, numbers)', async () => {
      await database.migrate([itemsMigration]);
      const doc: Doc = {
        id: 'json-ü-🙂',
        status: 'naïve "quoted" \\ back\nslash\t\u2028 — 日本語 🙂 e\u0301',
        rank: Number.MAX_SAFE_INTEGER,
        score: -1234.5678e-9,
        done: false,
        tags: ['ß', '🙂', ''],
        nested: { array: [1, 'two', null, true, { deep: [[], {}] }], empty: '', zero: 0, negative: -0.25, big: 1e300 },
        absentLater: null,
      };
      await database.write([{ op: 'insert', collection: ITEMS, doc }]);
      assert.deepEqual(await database.get(ITEMS, doc.id), doc);
      assert.deepEqual(await database.find(ITEMS, { where: { status: doc.status as string } }), [doc]);
      assert.deepEqual(await database.find(ITEMS, { where: { tags: { hasAll: ['🙂', 'ß'] } } }), [doc]);
      assert.deepEqual(await database.find(ITEMS, { where: { rank: Number.MAX_SAFE_INTEGER } }), [doc]);
    });

    describe('liveness', () => {
      beforeEach(() => database.migrate([itemsMigration]));

      it('a holder is live from holdLiveness until it is released; one never held is not', async () => {
        const lost: Error[] = [];
        const hold = await database.holdLiveness('worker-a', (error) => lost.push(error));
        assert.equal(hold.holder, 'worker-a');
        assert.deepEqual([...(await database.liveHolders(['worker-a', 'worker-b', 'worker-a']))], ['worker-a']);
        assert.deepEqual([...(await database.liveHolders([]))], []);
        await hold.release();
        assert.deepEqual([...(await database.liveHolders(['worker-a']))], []);
        assert.deepEqual(lost, [], 'a release is not a loss');
      });

      it('refuses to hold a holder that is live, and holds it again once released', async () => {
        const hold = await database.holdLiveness('worker-a', () => {});
        await assert.rejects(database.holdLiveness('worker-a', () => {}), /already held/);
        const other = await database.holdLiveness('worker-b', () => {});
        assert.deepEqual([...(await database.liveHolders(['worker-a', 'worker-b']))].sort(), ['worker-a', 'worker-b']);
        await hold.release();
        const again = await database.holdLiveness('worker-a', () => {});
        assert.deepEqual([...(await database.liveHolders(['worker-a', 'worker-b']))].sort(), ['worker-a', 'worker-b']);
        await Promise.all([again.release(), other.release()]);
      });

      it('ends every hold when the handle closes: the reopened store sees the holder dead (durable adapters)', async function () {
        if (!store.reopen) this.skip();
        await database.holdLiveness('worker-a', () => {});
        await database.close();
        database = await store.reopen();
        await database.migrate([itemsMigration]);
        assert.deepEqual([...(await database.liveHolders(['worker-a']))], []);
      });
    });

    describe('withLock', () => {
      beforeEach(async () => {
        await database.migrate([itemsMigration]);
        await database.write([{ op: 'insert', collection: ITEMS, doc: { id: 'counter', rank: 0 } }]);
      });

      /**
       * `count` tasks on `key`, spread over `handles`, each a read-modify-write of one counter with
       * store I/O in between: without mutual exclusion they interleave, overlap and lose increments.
       */
      async function contend(handles: Database[], key: string, count: number): Promise<{ order: number[]; mostAtOnce: number }> {
        let inside = 0;
        let mostAtOnce = 0;
        const order: number[] = [];
        await Promise.all(
          Array.from({ length: count }, (_, index) =>
            handles[index % handles.length]!.withLock(key, async () => {
              inside += 1;
              mostAtOnce = Math.max(mostAtOnce, inside);
              const handle = handles[index % handles.length]!;
              const counter = (await handle.get(ITEMS, 'counter'))!;
              await handle.find(ITEMS, { where: { status: 'none' } });
              await handle.write([{ op: 'replace', collection: ITEMS, doc: { ...counter, rank: (counter.rank as number) + 1 } }]);
              order.push(index);
              inside -= 1;
            }),
          ),
        );
        return { order, mostAtOnce };
      }

      it('runs the tasks of one key one at a time, in the order called, and answers what each returns', async () => {
        const { order, mostAtOnce } = await contend([database], 'workspace-1', 8);
        assert.equal(mostAtOnce, 1);
        assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6, 7]);
        assert.equal((await database.get(ITEMS, 'counter'))!.rank, 8);
        assert.equal(await database.withLock('workspace-1', async () => 'answer'), 'answer');
      });

      it('runs tasks of different keys at once', async () => {
        let openGate!: () => void;
        const gate = new Promise<void>((resolve) => (openGate = resolve));
        // The first task finishes only once the second, on another key, has run inside its own lock.
        const first = database.withLock('key-a', () => gate);
        await database.withLock('key-b', async () => openGate());
        await first;
      });

      it('releases the lock when a task fails, with the task’s error', async () => {
        await assert.rejects(
          database.withLock('key-a', async () => {
            throw new Error('task failed');
          }),
          /task failed/,
        );
        assert.equal(await database.withLock('key-a', async () => 'next'), 'next');
      });

      it('excludes the holders of one key on every handle of a shared store (shared adapters)', async function () {
        if (!store.openAnother) this.skip();
        const other = await store.openAnother();
        try {
          await other.migrate([itemsMigration]);
          const { order, mostAtOnce } = await contend([database, other], 'workspace-1', 10);
          assert.equal(mostAtOnce, 1);
          assert.equal(order.length, 10);
          assert.equal((await database.get(ITEMS, 'counter'))!.rank, 10);
        } finally {
          await other.close();
        }
      });
    });

    it('survives close and reopen with every write applied (durable adapters)', async function () {
      if (!store.reopen) this.skip();
      await withFixtures();
      await database.write([
        { op: 'insert', collection: ITEMS, doc: { id: 'n1', status: 'new', tags: ['x'] } },
        { op: 'replace', collection: ITEMS, doc: { ...fixtures[0]!, status: 'replaced' }, expect: { status: 'queued' } },
        { op: 'delete', collection: ITEMS, id: 'b2' },
      ]);
      await database.migrate([
        itemsMigration,
        { id: 'contract/002-items-color', steps: [{ addField: { collection: ITEMS, field: 'color', type: 'text' } }] },
      ]);
      await database.write([{ op: 'insert', collection: ITEMS, doc: { id: 'n2', color: 'red' } }]);
      const before = await database.find(ITEMS);
      await database.close();
      database = await store.reopen();
      await database.migrate([
        itemsMigration,
        { id: 'contract/002-items-color', steps: [{ addField: { collection: ITEMS, field: 'color', type: 'text' } }] },
      ]);
      assert.deepEqual(await database.find(ITEMS), before);
      assert.deepEqual(await findIds({ where: { color: 'red' } }), ['n2']);
      assert.deepEqual(await findIds({ where: { tags: { hasAll: ['x'] } } }), ['n1']);
      await assert.rejects(database.write([{ op: 'insert', collection: ITEMS, doc: { id: 'n1' } }]), DuplicateIdError);
      await database.write([{ op: 'insert', collection: ITEMS, doc: { id: 'n3' } }]);
      assert.deepEqual(await database.get(ITEMS, 'n3'), { id: 'n3' });
    });
  });
}
