import assert from 'node:assert/strict';
import { VersionedTexts } from './versioned-texts';

describe('VersionedTexts', () => {
  /** A compute answering `text` and counting its calls. */
  function counted(text: string | undefined) {
    const compute = async () => {
      compute.calls += 1;
      return text;
    };
    compute.calls = 0;
    return compute;
  }

  it('answers the kept text while the version stays, and computes again once it moves', async () => {
    const texts = new VersionedTexts();
    const compute = counted('list');
    assert.equal(await texts.keptUnder('k', 1, compute), 'list');
    assert.equal(await texts.keptUnder('k', 1, compute), 'list');
    assert.equal(compute.calls, 1);
    assert.equal(await texts.keptUnder('k', 2, compute), 'list');
    assert.equal(compute.calls, 2);
  });

  it('keeps each key apart', async () => {
    const texts = new VersionedTexts();
    assert.equal(await texts.keptUnder('a', 1, counted('first')), 'first');
    assert.equal(await texts.keptUnder('b', 1, counted('second')), 'second');
    assert.equal(await texts.keptUnder('a', 1, counted('unused')), 'first');
  });

  it('computes every time without a version, and keeps no undefined text', async () => {
    const texts = new VersionedTexts();
    const unversioned = counted('text');
    await texts.keptUnder('k', undefined, unversioned);
    await texts.keptUnder('k', undefined, unversioned);
    assert.equal(unversioned.calls, 2);
    const missing = counted(undefined);
    assert.equal(await texts.keptUnder('m', 1, missing), undefined);
    assert.equal(await texts.keptUnder('m', 1, missing), undefined);
    assert.equal(missing.calls, 2);
  });

  it('lets the least recently used text go past its bound, and computes it again', async () => {
    const texts = new VersionedTexts(2);
    for (const key of ['a', 'b', 'c']) await texts.keptUnder(key, 1, counted(key));
    const again = counted('a');
    assert.equal(await texts.keptUnder('a', 1, again), 'a');
    assert.equal(again.calls, 1);
  });
});
