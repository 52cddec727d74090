import assert from 'node:assert/strict';
import { nonPublicRange } from './address-policy';

describe('nonPublicRange', () => {
  it('lets public unicast IPv4 and IPv6 through', () => {
    for (const address of ['8.8.8.8', '93.184.215.14', '2606:4700:4700::1111', '64:ff9b::808:808', '2002:808:808::1']) {
      assert.equal(nonPublicRange(address), undefined, address);
    }
  });

  it('names every non-public kind, judging IPv4-mapped, NAT64 and 6to4 forms by the IPv4 inside', () => {
    const cases: Record<string, string> = {
      '127.0.0.1': 'loopback',
      '::1': 'loopback',
      '[::1]': 'loopback',
      '::ffff:127.0.0.1': 'loopback',
      '::ffff:7f00:1': 'loopback',
      '64:ff9b::7f00:1': 'loopback',
      '64:ff9b::a00:1': 'private',
      '2002:c0a8:101::': 'private',
      '::7f00:1': 'reserved',
      '10.0.0.1': 'private',
      '172.31.255.255': 'private',
      '192.168.1.1': 'private',
      '169.254.169.254': 'metadata',
      '::ffff:169.254.169.254': 'metadata',
      '169.254.170.2': 'metadata',
      '100.100.100.200': 'metadata',
      '168.63.129.16': 'metadata',
      'fd00:ec2::254': 'metadata',
      '169.254.0.1': 'linkLocal',
      'fe80::1%eth0': 'linkLocal',
      'fc00::1': 'uniqueLocal',
      '100.64.0.1': 'carrierGradeNat',
      '224.0.0.1': 'multicast',
      'ff02::1': 'multicast',
      '255.255.255.255': 'broadcast',
      '0.0.0.0': 'unspecified',
      '::': 'unspecified',
      '2001:db8::1': 'reserved',
      'not-an-ip': 'invalid',
    };
    for (const [address, range] of Object.entries(cases)) assert.equal(nonPublicRange(address), range, address);
  });
});
