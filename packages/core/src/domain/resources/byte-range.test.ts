import assert from 'node:assert/strict';
import { noneMatch, parseRange, rangeStillApplies } from './byte-range';

describe('byte ranges and validators', () => {
  it('reads a single range of the three forms, clamped to the content', () => {
    assert.deepEqual(parseRange('bytes=0-0', 10), { kind: 'partial', range: { start: 0, end: 0 } });
    assert.deepEqual(parseRange('bytes=3-', 10), { kind: 'partial', range: { start: 3, end: 9 } });
    assert.deepEqual(parseRange('bytes=-3', 10), { kind: 'partial', range: { start: 7, end: 9 } });
    assert.deepEqual(parseRange('Bytes = 2 - 99', 10), { kind: 'partial', range: { start: 2, end: 9 } });
    assert.deepEqual(parseRange('bytes=-5000', 10), { kind: 'partial', range: { start: 0, end: 9 } });
  });

  it('calls a range that starts past the end, or any range of empty content, unsatisfiable', () => {
    for (const [header, size] of [['bytes=10-', 10], ['bytes=10-20', 10], ['bytes=-0', 10], ['bytes=-5', 0], ['bytes=0-', 0]] as const) {
      assert.deepEqual(parseRange(header, size), { kind: 'unsatisfiable' }, `${header} of ${size}`);
    }
  });

  it('ignores absent, malformed and multi-range headers: the whole content', () => {
    for (const header of [null, 'bytes=', 'bytes=-', 'bytes=5-2', 'bytes=a-b', 'lines=0-1', 'bytes=0-1,3-4', 'bytes=1.5-2']) {
      assert.deepEqual(parseRange(header, 10), { kind: 'whole' }, String(header));
    }
  });

  it('matches If-None-Match weakly and If-Range strongly', () => {
    assert.equal(noneMatch('W/"abc"', '"abc"'), true);
    assert.equal(noneMatch('"x" , "abc"', '"abc"'), true);
    assert.equal(noneMatch('"abcd"', '"abc"'), false);
    assert.equal(noneMatch(null, '"abc"'), false);
    assert.equal(rangeStillApplies(null, '"abc"'), true);
    assert.equal(rangeStillApplies('"abc"', '"abc"'), true);
    assert.equal(rangeStillApplies('W/"abc"', '"abc"'), false);
    assert.equal(rangeStillApplies('Wed, 21 Oct 2015 07:28:00 GMT', '"abc"'), false);
  });
});
