import assert from 'node:assert/strict';
import { VerifiedTokenCache } from './verified-token-cache';

const principal = (accountId: string) => ({ accountId, clientId: `client-${accountId}` });

describe('VerifiedTokenCache', () => {
  it('answers until just before exp and never at or after it', () => {
    const cache = new VerifiedTokenCache(10);
    cache.set('t', principal('a'), 5000);
    assert.deepEqual(cache.get('t', 4999), principal('a'));
    assert.equal(cache.get('t', 5000), undefined);
    assert.equal(cache.get('t', 4000), undefined, 'an expired entry is dropped, not kept for later');
  });

  it('holds at most maxEntries, evicting the least recently used', () => {
    const cache = new VerifiedTokenCache(2);
    cache.set('a', principal('a'), 10_000);
    cache.set('b', principal('b'), 10_000);
    assert.ok(cache.get('a', 0), 'touching a makes b the least recently used');
    cache.set('c', principal('c'), 10_000);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('b', 0), undefined);
    assert.ok(cache.get('a', 0));
    assert.ok(cache.get('c', 0));
  });

  it('answers the same token asked again and again, and another in between, each until its exp', () => {
    const cache = new VerifiedTokenCache(10);
    cache.set('a', principal('a'), 5000);
    cache.set('b', principal('b'), 6000);
    for (const [token, now, expected] of [
      ['a', 0, 'a'],
      ['a', 1, 'a'],
      ['b', 2, 'b'],
      ['a', 3, 'a'],
      ['a', 5000, undefined],
      ['b', 5001, 'b'],
      ['a', 5002, undefined],
      ['c', 5003, undefined],
    ] as const) {
      assert.equal(cache.get(token, now)?.accountId, expected, `${token} at ${now}`);
    }
  });
});
