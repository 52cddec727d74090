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
});
