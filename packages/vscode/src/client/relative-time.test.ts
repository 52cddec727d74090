import assert from 'node:assert/strict';
import { timeAgo } from './relative-time';

describe('timeAgo (the Threads view\'s age of a thread)', () => {
  const now = new Date('2026-11-25T12:00:00Z');
  const before = (ms: number): Date => new Date(now.getTime() - ms);

  it('says how long ago in the largest whole unit, as the editor\'s lists do', () => {
    assert.equal(timeAgo(before(20_000), now, 'en'), 'just now');
    assert.equal(timeAgo(before(5 * 60_000), now, 'en'), '5 minutes ago');
    assert.equal(timeAgo(before(3 * 3600_000), now, 'en'), '3 hours ago');
    assert.equal(timeAgo(before(26 * 3600_000), now, 'en'), 'yesterday');
    assert.equal(timeAgo(before(15 * 24 * 3600_000), now, 'en'), '2 weeks ago');
    assert.equal(timeAgo(before(400 * 24 * 3600_000), now, 'en'), 'last year');
  });

  it('speaks the editor\'s language', () => {
    assert.equal(timeAgo(before(5 * 60_000), now, 'de'), 'vor 5 Minuten');
  });
});
