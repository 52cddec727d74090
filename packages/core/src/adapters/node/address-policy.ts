import ipaddr from 'ipaddr.js';
import { lazy } from '../../domain/lazy';

/**
 * Cloud metadata and host-agent endpoints. Most fall in ranges refused anyway (link-local, CGNAT,
 * unique-local); they are named so a refusal says what they are, and the ones in public space
 * (Azure's wire server, Oracle's 192.0.0.192) are refused at all. Made on first use, so ipaddr.js
 * (required on first use, see esbuild.mjs) loads with the first address checked, not at start.
 */
const METADATA_ADDRESSES = lazy(() =>
  normalizedSet([
    '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean
    '169.254.170.2', // AWS ECS task metadata
    '169.254.169.123', // AWS time sync
    '100.100.100.200', // Alibaba Cloud
    '192.0.0.192', // Oracle Cloud
    '168.63.129.16', // Azure wire server
    'fd00:ec2::254', // AWS over IPv6
    'fd00:ec2::23', // AWS DNS over IPv6
  ]),
);

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
  if (METADATA_ADDRESSES().has(ipv6.toNormalizedString())) return 'metadata';
  const range = ipv6.range();
  if (IPV4_EMBEDDING_RANGES.has(range)) return ipv4Range(embeddedIpv4(ipv6));
  if (range === '6to4') return ipv4Range(new ipaddr.IPv4(bytesOf(ipv6.parts[1]!, ipv6.parts[2]!)));
  // ::/96 holds the deprecated IPv4-compatible form (::a.b.c.d) and nothing routable besides.
  if (range === 'unicast' && ipv6.parts.slice(0, 6).every((part) => part === 0)) return 'reserved';
  return range === 'unicast' ? undefined : range;
}

function ipv4Range(address: ipaddr.IPv4): string | undefined {
  if (METADATA_ADDRESSES().has(address.toNormalizedString())) return 'metadata';
  const range = address.range();
  return range === 'unicast' ? undefined : range;
}

function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 {
  return new ipaddr.IPv4(bytesOf(address.parts[6]!, address.parts[7]!));
}

function bytesOf(high: number, low: number): number[] {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff];
}

/** One `--egress-allow` entry: a name as written in URLs, or an address, and maybe one port. */
export interface EgressAllowEntry {
  /** A lower-case host name without a trailing dot, or an address in normalised form. */
  host: string;
  kind: 'name' | 'address';
  /** Undefined: every port. */
  port?: number;
}

const ENTRY = /^(\[[^\]]*\]|[^\s:/?#@[\]\\]+)(?::(\d{1,5}))?$/;

/**
 * Parses an `--egress-allow` entry, `host[:port]`: a name (`llm.lan`), an IPv4 address in any
 * spelling (`10.0.0.7`, `0x0a000007`), or an IPv6 address in brackets (`[fd00::7]:8000`; a bare
 * IPv6 address means every port). Throws an `Error` saying what is wrong.
 */
export function parseEgressAllowEntry(entry: string): EgressAllowEntry {
  const text = entry.trim();
  const bareIpv6 = !text.startsWith('[') && text.split(':').length > 2 && ipaddr.IPv6.isValid(text);
  const match = ENTRY.exec(bareIpv6 ? `[${text}]` : text);
  if (!match) throw new Error(`'${entry}' is not host[:port] (a name, an IPv4 address or an [IPv6] address, then an optional port)`);
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65535)) throw new Error(`'${entry}': the port must be from 1 to 65535`);
  let hostname: string;
  try {
    // The URL parser spells hosts as requests will: 2130706433 and 127.1 become 127.0.0.1.
    hostname = new URL(`http://${match[1]}/`).hostname;
  } catch {
    throw new Error(`'${entry}': ${match[1]} is not a valid host name or address`);
  }
  const literal = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (ipaddr.isValid(literal)) return { host: normalizedAddress(literal), kind: 'address', port };
  return { host: hostname.replace(/\.$/, ''), kind: 'name', port };
}

/** Parses every entry; the message of the first invalid one names its position. */
export function parseEgressAllow(entries: readonly string[]): EgressAllowEntry[] {
  return entries.map((entry, index) => {
    try {
      return parseEgressAllowEntry(entry);
    } catch (error) {
      throw new Error(`egress allow entry #${index + 1} is invalid: ${(error as Error).message}`);
    }
  });
}

/** An address as allow entries hold it: IPv4-mapped IPv6 as its IPv4, the rest normalised. */
export function normalizedAddress(address: string): string {
  const literal = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  return ipaddr.process(literal.replace(/%.*$/, '')).toNormalizedString();
}
