import assert from 'node:assert/strict';
import { locateSqlWasm, SqlEngine } from './sql-engine';

describe('SqlEngine', () => {
  let engine: SqlEngine;
  beforeEach(async () => {
    engine = await SqlEngine.open(locateSqlWasm());
  });
  afterEach(() => engine.close());

  it('binds CAST(? AS TEXT) parameters as UTF-8 bytes that store and compare as the same TEXT', () => {
    const texts = ['', 'plain', 'ünïcode ✓ 🙂 \u0000 inside', JSON.stringify({ long: 'x'.repeat(20_000), emoji: '🙂' })];
    engine.run('CREATE TABLE t ("n" INTEGER, "v" TEXT)');
    texts.forEach((text, n) => engine.run('INSERT INTO t ("n", "v") VALUES (?, CAST(? AS TEXT))', [n, text]));
    const rows = engine.all('SELECT typeof("v"), "v", "v" = ?, length("v") FROM t WHERE "n" = ? AND "v" = CAST(? AS TEXT)', ['plain', 1, 'plain']);
    assert.deepEqual(rows, [['text', 'plain', 1, 5]]);
    assert.deepEqual(
      engine.all('SELECT typeof("v"), "v" FROM t ORDER BY "n"'),
      texts.map((text) => ['text', text]),
    );
  });

  it('exports an image of what is committed and written this turn, and goes on with the same connection', async () => {
    engine.run('CREATE TABLE t ("n" INTEGER)');
    const insert = 'INSERT INTO t ("n") VALUES (?)';
    engine.write(() => engine.run(insert, [1]), true);
    const image = engine.export();
    engine.write(() => engine.run(insert, [2]), true);
    assert.deepEqual(engine.all('SELECT "n" FROM t ORDER BY "n"'), [[1], [2]]);
    const copy = await SqlEngine.open(locateSqlWasm(), image);
    try {
      assert.deepEqual(copy.all('SELECT "n" FROM t'), [[1]]);
    } finally {
      copy.close();
    }
  });
});
