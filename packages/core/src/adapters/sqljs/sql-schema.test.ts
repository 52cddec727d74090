import assert from 'node:assert/strict';
import type { MigrationStep } from '../../ports/database';
import { locateSqlWasm, SqlEngine } from './sql-engine';
import { type CollectionSchema, loadSchema, schemaAfterStep, stepStatements } from './sql-schema';

describe('sql-schema', () => {
  let engine: SqlEngine;
  beforeEach(async () => {
    engine = await SqlEngine.open(locateSqlWasm());
  });
  afterEach(() => engine.close());

  it('schemaAfterStep gives each step the schema SQLite reads back from the tables it made', () => {
    const steps: MigrationStep[] = [
      { createCollection: 'things', fields: { id: 'text', name: 'text', size: 'integer', score: 'real', done: 'boolean', tags: 'json' } },
      { createCollection: 'bare', fields: {} },
      { addField: { collection: 'things', field: 'owner', type: 'text' } },
      { addField: { collection: 'bare', field: 'meta', type: 'json' } },
      { unindexField: { collection: 'things', field: 'size' } },
      { unindexField: { collection: 'bare', field: 'meta' } },
    ];
    const schema = new Map<string, CollectionSchema>();
    for (const step of steps) {
      for (const [sql, params] of stepStatements(step, schema)) engine.run(sql, params);
      const changed = schemaAfterStep(step, schema);
      schema.set(changed.name, changed);
    }
    const readBack = loadSchema(engine);
    assert.deepEqual([...schema.keys()].sort(), [...readBack.keys()].sort());
    for (const [name, collection] of readBack) {
      assert.deepEqual([...schema.get(name)!.fields], [...collection.fields], name);
      assert.equal(schema.get(name)!.insertSql, collection.insertSql, name);
    }
    assert.deepEqual([...schema.get('things')!.fields.keys()], ['name', 'size', 'score', 'done', 'tags', 'owner']);
    assert.deepEqual(
      engine.all(`SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name`).flat(),
      ['things__done', 'things__name', 'things__owner', 'things__score'],
      'unindexField dropped the index of size (meta, json, had none)',
    );
    assert.throws(() => stepStatements({ unindexField: { collection: 'things', field: 'nothing' } }, schema), /declares no such field/);
  });
});
