import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Migration } from '../../ports/database';
import type { Logger } from '../../ports/logger';
import { writeFreshStoreTemplate } from './fresh-store-template';
import { decodeRecord, decodeSegment, listSegments } from './log-format';
import { locateSqlWasm, SqlEngine } from './sql-engine';
import { openSqlJsDatabase, type SqlJsDatabase } from './sqljs-database';

const migrations: Migration[] = [
  { id: 'test/001-things', steps: [{ createCollection: 'things', fields: { id: 'text', name: 'text', size: 'integer', tags: 'json' } }] },
  { id: 'test/002-owner', steps: [{ addField: { collection: 'things', field: 'owner', type: 'text' } }] },
  // Already in place: no statement, and the same id twice applies once.
  { id: 'test/003-again', steps: [{ createCollection: 'things', fields: {} }] },
  { id: 'test/001-things', steps: [{ createCollection: 'never', fields: {} }] },
  { id: 'test/004-others', steps: [{ createCollection: 'others', fields: { at: 'real', done: 'boolean' } }] },
];

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, info() {}, warn: (_fields, message) => warnings.push(message), error() {} };
}

/** The statements a store's log holds, `_migrations` rows without their time. */
function loggedStatements(dir: string): unknown[] {
  return listSegments(dir).flatMap((segment) =>
    decodeSegment(readFileSync(segment.path), segment.startSeq).records.flatMap(({ payload }) =>
      decodeRecord(payload).map(([sql, params]) => (sql.includes('"_migrations"') ? [sql, params.slice(0, 1)] : [sql, params])),
    ),
  );
}

describe('fresh store templates', function () {
  this.timeout(30_000);
  let scratch: string;
  let templates: string;
  let open: SqlJsDatabase[];

  beforeEach(() => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'runloom-template-'));
    templates = path.join(scratch, 'templates');
    open = [];
  });
  afterEach(async () => {
    for (const database of open) await database.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  async function openStore(name: string, logger?: Logger): Promise<SqlJsDatabase> {
    const database = await openSqlJsDatabase({ dir: path.join(scratch, name), freshStoreTemplates: templates, logger });
    open.push(database);
    return database;
  }

  function templatesDir(): string {
    mkdirSync(templates, { recursive: true });
    return templates;
  }

  /** The template of `migrations`, holding one row no migration makes: a store that has it was loaded from the template. */
  async function markedTemplate(): Promise<void> {
    const file = await writeFreshStoreTemplate(templatesDir(), migrations);
    const engine = await SqlEngine.open(locateSqlWasm(), readFileSync(file));
    engine.run(`INSERT INTO "things" ("id", "_doc") VALUES ('marker', '{"id":"marker"}')`);
    writeFileSync(file, engine.export());
    engine.close();
  }

  it('a fresh store loads the template of its migrations, and logs the records running them logs', async () => {
    await markedTemplate();
    const fromTemplate = await openStore('a');
    await fromTemplate.migrate(migrations);
    assert.deepEqual(await fromTemplate.get('things', 'marker'), { id: 'marker' });
    await fromTemplate.close();

    rmSync(templates, { recursive: true });
    const ran = await openStore('b');
    await ran.migrate(migrations);
    await ran.close();
    assert.deepEqual(loggedStatements(path.join(scratch, 'a')), loggedStatements(path.join(scratch, 'b')));
  });

  it('answers as a store that ran its migrations, before and after it reopens, and migrates further', async () => {
    await writeFreshStoreTemplate(templatesDir(), migrations);
    const logger = recordingLogger();
    let store = await openStore('a', logger);
    await store.migrate(migrations);
    await store.write([
      { op: 'insert', collection: 'things', doc: { id: 't1', name: 'one', size: 1, tags: ['x'], owner: 'o' } },
      { op: 'insert', collection: 'things', doc: { id: 't2', name: 'two', size: 2, tags: ['x', 'y'], owner: 'o' } },
      { op: 'insert', collection: 'others', doc: { id: 'o1', at: 1.5, done: true } },
    ]);
    const answers = async (): Promise<unknown[]> => [
      await store.find('things', { where: { owner: 'o', size: { gt: 1 } }, orderBy: [{ field: 'name', direction: 'desc' }] }),
      await store.count('things', { tags: { hasAll: ['x'] } }),
      await store.find('others', { where: { done: true, at: 1.5 } }),
    ];
    const before = await answers();
    assert.deepEqual(before, [[{ id: 't2', name: 'two', size: 2, tags: ['x', 'y'], owner: 'o' }], 2, [{ id: 'o1', at: 1.5, done: true }]]);
    await store.close();

    rmSync(templates, { recursive: true });
    store = await openStore('a', logger);
    await store.migrate(migrations);
    assert.deepEqual(await answers(), before);
    await store.migrate([...migrations, { id: 'test/005-weight', steps: [{ addField: { collection: 'others', field: 'weight', type: 'real' } }] }]);
    assert.deepEqual(await store.find('others', { where: { weight: null } }), [{ id: 'o1', at: 1.5, done: true }]);
    assert.deepEqual(logger.warnings, []);
  });

  it('a store whose migrations differ from the template runs its own', async () => {
    await markedTemplate();
    const store = await openStore('a');
    await store.migrate(migrations.slice(0, 2));
    assert.equal(await store.get('things', 'marker'), undefined);
    await assert.rejects(store.find('others'), /unknown collection others/);
  });

  it('a template that does not load is logged, and the migrations run instead', async () => {
    const file = await writeFreshStoreTemplate(templatesDir(), migrations);
    writeFileSync(file, 'not a database, but a file of the same length'.padEnd(readFileSync(file).length, '.'));
    const logger = recordingLogger();
    const store = await openStore('a', logger);
    await store.migrate(migrations);
    assert.deepEqual(logger.warnings, ['the fresh store template does not load: running the migrations instead']);
    await store.write([{ op: 'insert', collection: 'things', doc: { id: 't1', size: 3 } }]);
    assert.deepEqual(await store.find('things', { where: { size: 3 } }), [{ id: 't1', size: 3 }]);
    assert.equal(readdirSync(templates).length, 1);
  });
});
