import assert from 'node:assert/strict';
import { lazy } from './lazy';

describe('lazy', () => {
  it('makes the value on the first call only, and answers the same value after', () => {
    let made = 0;
    const value = lazy(() => ({ made: ++made }));
    assert.equal(made, 0);
    const first = value();
    assert.equal(value(), first);
    assert.deepEqual(first, { made: 1 });
  });

  it('a make that throws gives each caller its error, until it succeeds', () => {
    let calls = 0;
    const value = lazy(() => {
      calls += 1;
      if (calls < 3) throw new Error(`could not make it (call ${calls})`);
      return 'made';
    });
    assert.throws(value, /could not make it \(call 1\)/);
    assert.throws(value, /could not make it \(call 2\)/);
    assert.equal(value(), 'made');
    assert.equal(value(), 'made');
    assert.equal(calls, 3);
  });
});
