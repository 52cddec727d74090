import assert from 'node:assert/strict';
import pg from 'pg';
import type { Database, Doc } from '../../ports/database';
import { describeDatabaseContract } from '../database.contract';
import { MemoryDatabase } from '../memory/memory-database';
import { describeJobQueueContract } from '../job-queue.contract';
import { databaseJobQueueTestBed } from '../../../test-support/database-job-queue.testbed';
import { openPostgresDatabase, type PostgresDatabase } from './postgres-database';
import { createTestSchema, TEST_DATABASE_URL } from '../../../test-support/postgres-test-store';

describeDatabaseContract('PostgresDatabase', async () => {
  const schema = createTestSchema();
  let open: Database = await schema.open();
  return {
    database: open,
    reopen: async () => (open = await schema.open()),
    openAnother: () => schema.open(),
    cleanup: async () => {
      await open.close();
      await schema.drop();
    },
  };
});

describeJobQueueContract('DatabaseJobQueue on PostgresDatabase, one connection pool per instance', async () => {
  const schema = createTestSchema();
  return databaseJobQueueTestBed({ connect: () => schema.open(), cleanup: () => schema.drop() });
});

describe('PostgresDatabase', function () {
  this.timeout(30_000);
  const schema = createTestSchema();
  const handles: PostgresDatabase[] = [];
  const open = async (): Promise<PostgresDatabase> => {
    const handle = await schema.open();
    handles.push(handle);
    return handle;
  };
  afterEach(async () => {
    for (const handle of handles.splice(0)) await handle.close();
    await schema.drop();
  });

  const itemsMigration = { id: 'pg/001-items', steps: [{ createCollection: 'items', fields: { status: 'text' as const, rank: 'integer' as const } }] };
  const notesMigration = { id: 'pg/002-notes', steps: [{ createCollection: 'notes', fields: { item_id: 'text' as const } }] };

  it('lets several instances migrate the same schema at once; each migration applies once', async () => {
    const instances = await Promise.all(Array.from({ length: 4 }, () => open()));
    const migrations = [
      itemsMigration,
      { id: 'pg/002-color', steps: [{ addField: { collection: 'items', field: 'color', type: 'text' as const } }] },
    ];
    await Promise.all(instances.map((instance) => instance.migrate(migrations)));
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const applied = await client.query(`SELECT "id" FROM "${schema.schema}"."_migrations" ORDER BY "id"`);
      assert.deepEqual(applied.rows, [{ id: 'pg/001-items' }, { id: 'pg/002-color' }]);
    } finally {
      await client.end();
    }
    await instances[0]!.write([{ op: 'insert', collection: 'items', doc: { id: 'i1', color: 'red' } }]);
    assert.deepEqual(await instances[3]!.find('items', { where: { color: 'red' } }), [{ id: 'i1', color: 'red' }]);
  });

  it('drops the index of an unindexField step and keeps the column; a field it does not declare fails the migration', async () => {
    const database = await open();
    await database.migrate([itemsMigration]);
    await database.write([{ op: 'insert', collection: 'items', doc: { id: 'i1', status: 'open', rank: 1 } }]);
    await database.migrate([itemsMigration, { id: 'pg/002-unindex-rank', steps: [{ unindexField: { collection: 'items', field: 'rank' } }] }]);
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const indexes = await client.query(`SELECT "indexname" FROM "pg_indexes" WHERE "schemaname" = $1 AND "tablename" = 'items' ORDER BY 1`, [schema.schema]);
      assert.deepEqual(
        indexes.rows.map((row: { indexname: string }) => row.indexname),
        ['items__status', 'items_pkey'],
      );
    } finally {
      await client.end();
    }
    assert.deepEqual(await database.find('items', { where: { rank: 1 } }), [{ id: 'i1', status: 'open', rank: 1 }]);
    await assert.rejects(database.migrate([{ id: 'pg/003-unindex-nothing', steps: [{ unindexField: { collection: 'items', field: 'nothing' } }] }]), /declares no such field/);
  });

  it('sees collections another instance created after it migrated', async () => {
    const first = await open();
    const second = await open();
    await second.migrate([]);
    await first.migrate([itemsMigration]);
    await first.write([{ op: 'insert', collection: 'items', doc: { id: 'i1', rank: 1 } }]);
    assert.deepEqual(await second.find('items', { where: { rank: 1 } }), [{ id: 'i1', rank: 1 }]);
  });

  it('returns a document exactly as written: key order, NUL characters, numbers beyond 2^53', async () => {
    const database = await open();
    await database.migrate([itemsMigration]);
    const doc = { id: 'exact', zeta: 1, alpha: 'a\u0000b', nested: { b: 2, a: 1 }, status: 'x\u0000y', rank: 2 ** 60 };
    await database.write([{ op: 'insert', collection: 'items', doc }]);
    assert.equal(JSON.stringify(await database.get('items', 'exact')), JSON.stringify(doc));
    assert.deepEqual(await database.find('items', { where: { rank: { gt: 2 ** 59 } } }), [doc]);
  });

  it('queries text holding NUL and \\x01 with the same meaning as the other adapters', async () => {
    const database = await open();
    await database.migrate([itemsMigration]);
    const docs = [
      { id: 'id\u0000nul', status: 'a\u0000', label: 'n\u0000l' },
      { id: 'one', status: 'a\u0001', label: 'one\u0001' },
      { id: 'plain', status: 'a', label: 'plain' },
      { id: 'two', status: 'a\u0002' },
    ];
    await database.write(docs.map((doc) => ({ op: 'insert' as const, collection: 'items', doc })));
    assert.deepEqual(await database.get('items', 'id\u0000nul'), docs[0]);
    const statuses = async (where: Parameters<Database['find']>[1]) => (await database.find('items', where)).map((doc) => doc.id);
    assert.deepEqual(await statuses({ where: { status: 'a\u0000' } }), ['id\u0000nul']);
    assert.deepEqual(await statuses({ where: { status: 'a\u0001' } }), ['one']);
    assert.deepEqual(await statuses({ orderBy: [{ field: 'status' }] }), ['plain', 'id\u0000nul', 'one', 'two']);
    assert.deepEqual(await statuses({ where: { status: { gt: 'a\u0000' } } }), ['one', 'two']);
    assert.deepEqual(await statuses({ where: { id: { in: ['id\u0000nul', 'plain'] } } }), ['id\u0000nul', 'plain']);
    // Fields added later are filled from stored documents the same way.
    await database.migrate([itemsMigration, { id: 'pg/003-label', steps: [{ addField: { collection: 'items', field: 'label', type: 'text' } }] }]);
    assert.deepEqual(await statuses({ where: { label: 'n\u0000l' } }), ['id\u0000nul']);
    assert.deepEqual(await statuses({ where: { label: 'one\u0001' } }), ['one']);
    assert.deepEqual(await statuses({ where: { label: null } }), ['two']);
    await database.write([{ op: 'delete', collection: 'items', id: 'id\u0000nul', expect: { status: 'a\u0000' } }]);
    assert.equal(await database.count('items'), 3);
  });

  it('fills fields added later from stored documents of every shape as the memory adapter reads them', async () => {
    const database = await open();
    const reference = new MemoryDatabase();
    const created = { id: 'pg/001-things', steps: [{ createCollection: 'things', fields: {} }] };
    const added = {
      id: 'pg/002-things-fields',
      steps: (['text', 'integer', 'real', 'boolean', 'json'] as const).map((type) => ({ addField: { collection: 'things', field: `f_${type}`, type } })),
    };
    // Values of each field's declared type, null and absent; one document also holds a NUL.
    const values = {
      f_text: ['s', '', 'x\u0001y', 'n\u0000ul', null, undefined],
      f_integer: [0, 7, 2 ** 60, -3, null, undefined],
      f_real: [-2.5, 0.1, 1e300, null, undefined],
      f_boolean: [true, false, null, undefined],
      f_json: [['a', 'b'], [], ['a'], null, undefined],
    };
    const docs = Array.from({ length: 12 }, (_, index) => {
      const doc: Doc = { id: `d${String(index).padStart(2, '0')}` };
      for (const [field, options] of Object.entries(values)) {
        const value = options[index % options.length];
        if (value !== undefined) doc[field] = value;
      }
      return doc;
    });
    for (const store of [database, reference]) {
      await store.migrate([created]);
      await store.write(docs.map((doc) => ({ op: 'insert' as const, collection: 'things', doc })));
      await store.migrate([created, added]);
    }
    const queries: Parameters<Database['find']>[1][] = [
      { where: { f_text: 's' } },
      { where: { f_text: '' } },
      { where: { f_text: null } },
      { where: { f_text: 'x\u0001y' } },
      { where: { f_text: 'n\u0000ul' } },
      { where: { f_text: { gt: 'a' } }, orderBy: [{ field: 'f_text', direction: 'desc' }] },
      { orderBy: [{ field: 'f_integer' }, { field: 'f_real', direction: 'desc' }] },
      { where: { f_boolean: { ne: true } } },
      { where: { f_integer: 7 } },
      { where: { f_integer: { lt: 0 } } },
      { where: { f_integer: 2 ** 60 } },
      { where: { f_real: { lt: 0 } } },
      { where: { f_boolean: false } },
      { where: { f_boolean: null } },
      { where: { f_json: { hasAll: ['a'] } } },
      { where: { f_json: { hasAll: [] } } },
      { where: { f_json: null } },
    ];
    for (const query of queries) {
      const ids = async (store: Database) => (await store.find('things', query)).map((doc) => doc.id);
      assert.deepEqual(await ids(database), await ids(reference), JSON.stringify(query));
    }
  });

  it('serializes conditional replaces from separate connections: exactly one of racing claims wins', async () => {
    const instances = await Promise.all(Array.from({ length: 3 }, () => open()));
    await instances[0]!.migrate([itemsMigration]);
    await Promise.all(instances.map((instance) => instance.migrate([itemsMigration])));
    await instances[0]!.write(Array.from({ length: 20 }, (_, n) => ({ op: 'insert' as const, collection: 'items', doc: { id: `j${n}`, status: 'queued' } })));
    const outcomes = await Promise.all(
      instances.flatMap((instance, worker) =>
        Array.from({ length: 20 }, (_, n) =>
          instance
            .write([{ op: 'replace', collection: 'items', doc: { id: `j${n}`, status: `taken-by-${worker}` }, expect: { status: 'queued' } }])
            .then(() => 'won', () => 'lost'),
        ),
      ),
    );
    assert.equal(outcomes.filter((outcome) => outcome === 'won').length, 20);
    assert.equal(await instances[1]!.count('items', { status: 'queued' }), 0);
  });

  describe('group commit', () => {
    let database: PostgresDatabase;
    /** Sessions of their own, outside the store's pool. */
    let observer: pg.Pool;
    beforeEach(async () => {
      database = await open();
      await database.migrate([itemsMigration, notesMigration]);
      observer = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 4 });
    });
    afterEach(() => observer.end());

    /** Whether another session sees the item: only committed rows are visible there. */
    const committed = async (id: string): Promise<boolean> =>
      (await observer.query(`SELECT 1 FROM "${schema.schema}"."items" WHERE "id" = $1`, [id])).rowCount === 1;

    it('commits concurrent writes in shared transactions, each acknowledged only once committed', async () => {
      const writes = Array.from({ length: 40 }, (_, n) =>
        database
          .write([
            { op: 'insert', collection: 'items', doc: { id: `i${n}`, rank: n } },
            { op: 'insert', collection: 'notes', doc: { id: `n${n}`, item_id: `i${n}` } },
          ])
          .then(() => committed(`i${n}`)),
      );
      assert.deepEqual(await Promise.all(writes), writes.map(() => true));
      // Rows written by one transaction carry its id (xmin): far fewer transactions than writes.
      const transactions = await observer.query(`SELECT DISTINCT xmin::text FROM "${schema.schema}"."items"`);
      assert.ok(transactions.rowCount! < 10, `${transactions.rowCount} transactions for 40 writes`);
      assert.equal(await database.count('notes'), 40);
    });

    it('refuses only the writes of a batch that cannot apply; the others commit and none is half-applied', async () => {
      await database.write([{ op: 'insert', collection: 'items', doc: { id: 'taken', status: 'queued' } }]);
      const outcome = (write: Promise<void>) => write.then(() => 'ok', (error: Error) => error.constructor.name);
      const outcomes = await Promise.all([
        ...Array.from({ length: 10 }, (_, n) => outcome(database.write([{ op: 'insert', collection: 'items', doc: { id: `a${n}` } }]))),
        // Two operations, the second on an existing id: neither may apply.
        outcome(
          database.write([
            { op: 'insert', collection: 'notes', doc: { id: 'half', item_id: 'taken' } },
            { op: 'insert', collection: 'items', doc: { id: 'taken' } },
          ]),
        ),
        // Racing claims of one item: exactly one wins.
        ...Array.from({ length: 4 }, (_, n) =>
          outcome(database.write([{ op: 'replace', collection: 'items', doc: { id: 'taken', status: `claimed-${n}` }, expect: { status: 'queued' } }])),
        ),
        ...Array.from({ length: 10 }, (_, n) => outcome(database.write([{ op: 'insert', collection: 'items', doc: { id: `b${n}` } }]))),
      ]);
      assert.deepEqual(outcomes.slice(0, 10), Array(10).fill('ok'));
      assert.equal(outcomes[10], 'DuplicateIdError');
      assert.deepEqual(outcomes.slice(11, 15).sort(), ['WriteConflictError', 'WriteConflictError', 'WriteConflictError', 'ok']);
      assert.deepEqual(outcomes.slice(15), Array(10).fill('ok'));
      assert.equal(await database.get('notes', 'half'), undefined);
      assert.equal(await database.count('items'), 21);
      assert.equal(await database.count('items', { status: 'queued' }), 0);
    });

    it('commits a batch of inserts, replaces and deletes together; a write whose only operation changes nothing is refused alone', async () => {
      await database.write(['r0', 'r1', 'r2', 'r3', 'lone'].map((id) => ({ op: 'insert', collection: 'items', doc: { id, status: 'queued' } })));
      const outcome = (write: Promise<void>) => write.then(() => 'ok', (error: Error) => error.constructor.name);
      const outcomes = await Promise.all([
        ...['r0', 'r1', 'r2', 'r3'].map((id) => outcome(database.write([{ op: 'replace', collection: 'items', doc: { id, status: 'done' }, expect: { status: 'queued' } }]))),
        outcome(database.write([{ op: 'delete', collection: 'items', id: 'lone', expect: { status: 'running' } }])),
        ...Array.from({ length: 4 }, (_, n) =>
          outcome(
            database.write([
              { op: 'insert', collection: 'notes', doc: { id: `n${n}`, item_id: 'r0' } },
              { op: 'insert', collection: 'items', doc: { id: `i${n}`, status: 'new' } },
            ]),
          ),
        ),
      ]);
      assert.deepEqual(outcomes, ['ok', 'ok', 'ok', 'ok', 'WriteConflictError', 'ok', 'ok', 'ok', 'ok']);
      assert.deepEqual(await database.get('items', 'lone'), { id: 'lone', status: 'queued' });
      assert.equal(await database.count('items', { status: 'done' }), 4);
      assert.equal(await database.count('notes'), 4);
      // All but the first two writes (each started a batch at once) shared one transaction.
      const transactions = await observer.query(`SELECT DISTINCT xmin::text FROM "${schema.schema}"."items" WHERE "status" IN ('done', 'new')`);
      assert.ok(transactions.rowCount! <= 3, `${transactions.rowCount} transactions`);
    });

    it('applies no operation of a write whose precondition fails in a batch; the batch’s other writes commit', async () => {
      await database.write(['r0', 'r1', 'r2', 'kept'].map((id) => ({ op: 'insert', collection: 'items', doc: { id, status: 'queued' } })));
      const outcome = (write: Promise<void>) => write.then(() => 'ok', (error: Error) => error.constructor.name);
      const outcomes = await Promise.all([
        ...['r0', 'r1'].map((id) => outcome(database.write([{ op: 'replace', collection: 'items', doc: { id, status: 'done' }, expect: { status: 'queued' } }]))),
        outcome(
          database.write([
            { op: 'insert', collection: 'notes', doc: { id: 'half', item_id: 'kept' } },
            { op: 'replace', collection: 'items', doc: { id: 'kept', status: 'done' }, expect: { status: 'running' } },
          ]),
        ),
        outcome(database.write([{ op: 'delete', collection: 'items', id: 'r2', expect: { status: 'queued' } }])),
      ]);
      assert.deepEqual(outcomes, ['ok', 'ok', 'WriteConflictError', 'ok']);
      assert.equal(await database.get('notes', 'half'), undefined);
      assert.deepEqual(await database.get('items', 'kept'), { id: 'kept', status: 'queued' });
      assert.equal(await database.get('items', 'r2'), undefined);
      assert.equal(await database.count('items', { status: 'done' }), 2);
    });

    it('applies the writes of a batch that change one row in turn, as separate transactions would', async () => {
      const outcome = (write: Promise<void>) => write.then(() => 'ok', (error: Error) => error.constructor.name);
      const outcomes = await Promise.all([
        outcome(database.write([{ op: 'insert', collection: 'items', doc: { id: 'x', status: 'queued' } }])),
        outcome(database.write([{ op: 'insert', collection: 'items', doc: { id: 'y', status: 'queued' } }])),
        outcome(database.write([{ op: 'insert', collection: 'items', doc: { id: 'row', status: 'new' } }])),
        outcome(database.write([{ op: 'replace', collection: 'items', doc: { id: 'row', status: 'claimed' }, expect: { status: 'new' } }])),
        outcome(
          database.write([
            { op: 'insert', collection: 'notes', doc: { id: 'note', item_id: 'row' } },
            { op: 'delete', collection: 'items', id: 'row', expect: { status: 'claimed' } },
          ]),
        ),
      ]);
      assert.deepEqual(outcomes, ['ok', 'ok', 'ok', 'ok', 'ok']);
      assert.equal(await database.get('items', 'row'), undefined);
      assert.deepEqual(await database.get('notes', 'note'), { id: 'note', item_id: 'row' });
    });

    it('refuses only the write whose id exists when a batch of inserts fails; none is half-applied', async () => {
      await database.write([{ op: 'insert', collection: 'items', doc: { id: 'taken' } }]);
      const outcome = (write: Promise<void>) => write.then(() => 'ok', (error: Error) => error.constructor.name);
      const inserts = (prefix: string) =>
        Array.from({ length: 10 }, (_, n) =>
          outcome(
            database.write([
              { op: 'insert', collection: 'items', doc: { id: `${prefix}${n}` } },
              { op: 'insert', collection: 'notes', doc: { id: `${prefix}${n}`, item_id: `${prefix}${n}` } },
            ]),
          ),
        );
      const outcomes = await Promise.all([
        ...inserts('a'),
        outcome(
          database.write([
            { op: 'insert', collection: 'notes', doc: { id: 'half', item_id: 'taken' } },
            { op: 'insert', collection: 'items', doc: { id: 'taken' } },
          ]),
        ),
        ...inserts('b'),
      ]);
      assert.deepEqual(outcomes, [...Array(10).fill('ok'), 'DuplicateIdError', ...Array(10).fill('ok')]);
      assert.equal(await database.get('notes', 'half'), undefined);
      assert.equal(await database.count('items'), 21);
      assert.equal(await database.count('notes'), 20);
    });
  });

  describe('coalesced gets', () => {
    let database: PostgresDatabase;
    beforeEach(async () => {
      database = await open();
      await database.migrate([itemsMigration, notesMigration]);
      await database.write([
        { op: 'insert', collection: 'items', doc: { id: 'a', n: 1 } },
        { op: 'insert', collection: 'items', doc: { id: 'nul\u0000\u0001', n: 2 } },
        { op: 'insert', collection: 'notes', doc: { id: 'a', item_id: 'a' } },
      ]);
    });

    it('answers concurrent gets of several collections, the same id twice and missing ids as separate reads, each with its own document', async () => {
      const asked: [string, string][] = [
        ['items', 'a'],
        ['notes', 'a'],
        ['items', 'a'],
        ['items', 'missing'],
        ['notes', 'nul\u0000\u0001'],
        ['items', 'nul\u0000\u0001'],
        ...Array.from({ length: 30 }, (_, n): [string, string] => [n % 2 ? 'items' : 'notes', n % 3 ? 'a' : `none-${n}`]),
      ];
      const answers = await Promise.all(asked.map(([collection, id]) => database.get(collection, id)));
      const alone: (Doc | undefined)[] = [];
      for (const [collection, id] of asked) alone.push(await database.get(collection, id));
      assert.deepEqual(answers, alone);
      assert.deepEqual(answers.slice(0, 6), [{ id: 'a', n: 1 }, { id: 'a', item_id: 'a' }, { id: 'a', n: 1 }, undefined, undefined, { id: 'nul\u0000\u0001', n: 2 }]);
      assert.notEqual(answers[0], answers[2]);
    });

    it('answers a get asked after a write resolved with that write, whatever gets are under way', async () => {
      for (let n = 0; n < 20; n += 1) {
        const earlier = Array.from({ length: 3 }, () => database.get('items', `late-${n}`));
        await database.write([{ op: 'insert', collection: 'items', doc: { id: `late-${n}` } }]);
        assert.deepEqual(await database.get('items', `late-${n}`), { id: `late-${n}` });
        await Promise.all(earlier);
      }
    });
  });

  it('sees a holder dead the moment its session ends, and tells the holder its hold was lost', async () => {
    const [holding, watching] = [await open(), await open()];
    await Promise.all([holding.migrate([]), watching.migrate([])]);
    const lost: Error[] = [];
    let onLost = (): void => {};
    const lostOnce = new Promise<void>((resolve) => (onLost = resolve));
    await holding.holdLiveness('worker-a', (error) => {
      lost.push(error);
      onLost();
    });
    assert.deepEqual([...(await watching.liveHolders(['worker-a']))], ['worker-a']);
    // The server ends the holding session, as it does when the holder's process dies (kill -9).
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const ended = await client.query(
        `SELECT pg_terminate_backend(l.pid) AS "ended" FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.mode = 'ExclusiveLock' AND l.pid <> pg_backend_pid()
           AND l.objsubid = 1 AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($1, 0)`,
        [`runloom:live:${schema.schema}:worker-a`],
      );
      assert.equal(ended.rowCount, 1);
    } finally {
      await client.end();
    }
    await lostOnce;
    assert.equal(lost.length, 1);
    assert.deepEqual([...(await watching.liveHolders(['worker-a']))], []);
    // The holder can be held again (a queue takes a new id, but the store does not insist).
    await holding.holdLiveness('worker-a', () => {});
    assert.deepEqual([...(await watching.liveHolders(['worker-a']))], ['worker-a']);
  });

  it('refuses an unreachable server at open, without printing the password', async () => {
    await assert.rejects(openPostgresDatabase('postgres://runloom:hunter2@127.0.0.1:1/none'), (error: Error) => {
      assert.match(error.message, /cannot reach PostgreSQL at postgres:\/\/runloom:\*\*\*@127\.0\.0\.1:1\/none/);
      assert.ok(!error.message.includes('hunter2'));
      return true;
    });
  });

  it('takes the schema from the URL’s schema parameter', async () => {
    const database = await openPostgresDatabase(`${TEST_DATABASE_URL}?schema=${schema.schema}`);
    handles.push(database);
    assert.equal(database.schema, schema.schema);
    await database.migrate([itemsMigration]);
    const other = await open();
    await other.migrate([]);
    await database.write([{ op: 'insert', collection: 'items', doc: { id: 'via-url' } }]);
    assert.deepEqual(await other.get('items', 'via-url'), { id: 'via-url' });
  });

  it('refuses a schema name that is not a plain identifier', async () => {
    await assert.rejects(openPostgresDatabase(TEST_DATABASE_URL, { schema: 'x"; DROP TABLE y; --' }), /schema name/);
  });
});
