import assert from 'node:assert/strict';
import { ManualClock } from '../../testing/manual-clock';
import { addressKey, THROTTLE_POLICY, TokenThrottle } from './token-throttle';

describe('TokenThrottle', () => {
  it('counts IPv4 as is, IPv4-mapped IPv6 as its IPv4 address, other IPv6 by /64, and no address as one unknown', () => {
    assert.equal(addressKey('198.51.100.7'), '198.51.100.7');
    assert.equal(addressKey('::ffff:198.51.100.7'), '198.51.100.7');
    assert.equal(addressKey('0:0:0:0:0:ffff:198.51.100.7'), '198.51.100.7');
    assert.equal(addressKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:0db8:0001:0002:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64');
    assert.equal(addressKey('[2001:db8:1:2::9]'), '2001:db8:1:2::/64');
    assert.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(addressKey('::1'), '0:0:0:0::/64');
    assert.equal(addressKey(undefined), 'unknown');
    assert.equal(addressKey(''), 'unknown');
  });

  it('forgets failures after 15 minutes without one', async () => {
    const clock = new ManualClock(Date.UTC(2030, 0, 1));
    const throttle = new TokenThrottle(clock);
    const keys = { clientId: 'c', remoteAddress: '198.51.100.7' };
    for (let index = 0; index < THROTTLE_POLICY.freeFailuresPerClientAndAddress; index += 1) {
      const attempt = await throttle.begin(keys);
      assert.ok(!('retryAfterSeconds' in attempt));
      attempt.failed();
    }
    await clock.advance(THROTTLE_POLICY.forgetAfterMs);
    const fresh = await throttle.begin(keys);
    assert.ok(!('retryAfterSeconds' in fresh));
    assert.equal(fresh.failed().failures, 1);
  });
});
