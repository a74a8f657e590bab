/**
 * Is an IP address somewhere a webhook must not be sent (SSRF guard)? Pure: the caller resolves
 * host names and checks every address DNS returns, because resolving is I/O.
 *
 * "Private" here means "not a public unicast destination": loopback, RFC 1918, link-local (cloud
 * metadata at 169.254.169.254), CGNAT, this-network, documentation, benchmarking, multicast and
 * reserved space (IANA special-purpose registries, RFC 6890). IPv6 is public only inside global
 * unicast 2000::/3, minus Teredo, documentation and benchmarking prefixes; IPv4 addresses embedded
 * in IPv6 (::ffff:0:0/96 mapped, 64:ff9b::/96 NAT64, 2002::/16 6to4) are judged as the IPv4 address
 * they reach.
 */

/** [first address, prefix length] of IPv4 ranges that are not public unicast. */
const PRIVATE_V4: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host on Linux
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // carrier-grade NAT, RFC 6598
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12], // RFC 1918
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast, deprecated
  ['192.168.0.0', 16], // RFC 1918
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
];

const PRIVATE_V4_RANGES = PRIVATE_V4.map(([first, prefix]) => ({ base: dottedToNumber(first), mask: prefixMask(prefix) }));

function prefixMask(prefix: number): number {
  return prefix === 0 ? 0 : (0xffff_ffff << (32 - prefix)) >>> 0;
}

function dottedToNumber(dotted: string): number {
  return dotted.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
}

export function ipv4IsPrivate(address: number): boolean {
  return PRIVATE_V4_RANGES.some(({ base, mask }) => (address & mask) >>> 0 === base);
}

/** Eight 16-bit groups of an IPv6 address in the WHATWG URL serialisation (hex groups, at most one "::"). */
function ipv6Groups(serialised: string): number[] | undefined {
  const [head, tail, ...rest] = serialised.split('::');
  if (rest.length > 0) return undefined;
  const read = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const first = read(head);
  const last = read(tail);
  const zeros = tail === undefined ? 0 : 8 - first.length - last.length;
  const groups = [...first, ...new Array<number>(zeros).fill(0), ...last];
  return groups.length === 8 && groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : undefined;
}

export function ipv6IsPrivate(groups: number[]): boolean {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups;
  const embeddedV4 = (high: number, low: number) => ((high << 16) >>> 0) + low;
  const zeroUpTo = (count: number) => groups.slice(0, count).every((group) => group === 0);
  // ::ffff:a.b.c.d: sockets connect to the IPv4 address itself.
  if (zeroUpTo(5) && g5 === 0xffff) return ipv4IsPrivate(embeddedV4(g6, g7));
  // 64:ff9b::a.b.c.d: a NAT64 gateway forwards to the IPv4 address.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return ipv4IsPrivate(embeddedV4(g6, g7));
  // Global unicast is 2000::/3; everything else (::1, ::, fc00::/7, fe80::/10, fec0::/10, ff00::/8, 100::/64, ...) is not public.
  if ((g0 & 0xe000) !== 0x2000) return true;
  if (g0 === 0x2001 && (g1 === 0 || g1 === 0xdb8)) return true; // Teredo tunnels, documentation
  if (g0 === 0x2001 && g1 === 2 && g2 === 0) return true; // benchmarking 2001:2::/48
  if ((g0 & 0xfff0) === 0x3ff0) return true; // documentation 3fff::/20
  if (g0 === 0x2002) return ipv4IsPrivate(embeddedV4(g1, g2)); // 6to4 carries the IPv4 address in bits 16-47
  return false;
}

export type ParsedIp = { version: 4; address: number } | { version: 6; groups: number[] };

/**
 * An IP address in any form the WHATWG URL parser accepts as a host (decimal `2130706433`, hex
 * `0x7f.1`, octal `0177.0.0.1`, `[::ffff:127.0.0.1]`, with or without brackets, with an IPv6 zone
 * id), parsed by that parser so it means what an HTTP client will connect to. undefined for a
 * host name or garbage.
 */
export function parseIp(text: string): ParsedIp | undefined {
  const bare = text
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/%.*$/, '');
  // Only characters of IP literals: keeps "evil.example@127.0.0.1" and paths from parsing as hosts.
  if (bare === '' || !/^[0-9a-fx.:]+$/i.test(bare)) return undefined;
  let hostname: string;
  try {
    hostname = new URL(bare.includes(':') ? `http://[${bare}]/` : `http://${bare}/`).hostname;
  } catch {
    return undefined;
  }
  if (hostname.startsWith('[')) {
    const groups = ipv6Groups(hostname.slice(1, -1));
    return groups && { version: 6, groups };
  }
  return /^\d+\.\d+\.\d+\.\d+$/.test(hostname) ? { version: 4, address: dottedToNumber(hostname) } : undefined;
}

/**
 * True when the address is not a public unicast destination (see the file comment). Fails closed:
 * a string that is not an IP address at all is reported private, so a caller that passes through
 * something unexpected from a resolver refuses it rather than connects.
 */
export function ipIsPrivate(address: string): boolean {
  const ip = parseIp(address);
  if (!ip) return true;
  return ip.version === 4 ? ipv4IsPrivate(ip.address) : ipv6IsPrivate(ip.groups);
}
