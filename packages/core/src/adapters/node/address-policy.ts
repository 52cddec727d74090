import ipaddr from 'ipaddr.js';

/**
 * Cloud metadata and host-agent endpoints. Most fall in ranges refused anyway (link-local, CGNAT,
 * unique-local); they are named so a refusal says what they are, and the ones in public space
 * (Azure's wire server, Oracle's 192.0.0.192) are refused at all.
 */
const METADATA_ADDRESSES = normalizedSet([
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean
  '169.254.170.2', // AWS ECS task metadata
  '169.254.169.123', // AWS time sync
  '100.100.100.200', // Alibaba Cloud
  '192.0.0.192', // Oracle Cloud
  '168.63.129.16', // Azure wire server
  'fd00:ec2::254', // AWS over IPv6
  'fd00:ec2::23', // AWS DNS over IPv6
]);

function normalizedSet(addresses: string[]): Set<string> {
  return new Set(addresses.map((address) => ipaddr.parse(address).toNormalizedString()));
}

/** IPv6 ranges that carry an IPv4 address in their last 32 bits: judged by that address. */
const IPV4_EMBEDDING_RANGES = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052']);

/**
 * What kind of non-public address `address` (an IP literal) is, e.g. `loopback`, `private`,
 * `metadata`; undefined for a public unicast address, the only kind the policy lets through.
 * Unparsable input counts as `invalid` (refused).
 */
export function nonPublicRange(address: string): string | undefined {
  const literal = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!ipaddr.isValid(literal)) return 'invalid';
  const parsed = ipaddr.parse(literal);
  if (parsed.kind() === 'ipv4') return ipv4Range(parsed as ipaddr.IPv4);
  const ipv6 = parsed as ipaddr.IPv6;
  if (METADATA_ADDRESSES.has(ipv6.toNormalizedString())) return 'metadata';
  const range = ipv6.range();
  if (IPV4_EMBEDDING_RANGES.has(range)) return ipv4Range(embeddedIpv4(ipv6));
  if (range === '6to4') return ipv4Range(new ipaddr.IPv4(bytesOf(ipv6.parts[1]!, ipv6.parts[2]!)));
  // ::/96 holds the deprecated IPv4-compatible form (::a.b.c.d) and nothing routable besides.
  if (range === 'unicast' && ipv6.parts.slice(0, 6).every((part) => part === 0)) return 'reserved';
  return range === 'unicast' ? undefined : range;
}

function ipv4Range(address: ipaddr.IPv4): string | undefined {
  if (METADATA_ADDRESSES.has(address.toNormalizedString())) return 'metadata';
  const range = address.range();
  return range === 'unicast' ? undefined : range;
}

function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 {
  return new ipaddr.IPv4(bytesOf(address.parts[6]!, address.parts[7]!));
}

function bytesOf(high: number, low: number): number[] {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff];
}
