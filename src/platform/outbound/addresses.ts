/**
 * Which IP addresses an outbound request to a caller-chosen URL (a webhook)
 * may reach: public unicast only. Everything an attacker could use to reach
 * the operator's own network is refused: loopback, private (RFC 1918, ULA),
 * link-local (cloud metadata at 169.254.169.254), CGNAT, multicast,
 * unspecified, documentation, benchmarking and other reserved ranges, in IPv4
 * and IPv6, including IPv6 forms that embed an IPv4 address (mapped,
 * compatible, NAT64, 6to4, Teredo).
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

const V4_NON_PUBLIC: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

/** Inside 2000::/3 (the only global unicast space), these are still not public destinations. */
const V6_NON_PUBLIC: readonly (readonly [string, number])[] = [
  ['2001::', 23], // IETF protocol assignments (Teredo 2001::/32 included)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['3fff::', 20], // documentation
];

const v4Blocked = new BlockList();
for (const [network, prefix] of V4_NON_PUBLIC) v4Blocked.addSubnet(network, prefix, 'ipv4');
const v6GlobalUnicast = new BlockList();
v6GlobalUnicast.addSubnet('2000::', 3, 'ipv6');
const v6Blocked = new BlockList();
for (const [network, prefix] of V6_NON_PUBLIC) v6Blocked.addSubnet(network, prefix, 'ipv6');

/** The IPv4 address an IPv6 address embeds as `::ffff:a.b.c.d` or `::a.b.c.d` (any spelling), if any. */
function embeddedIPv4(address: string): string | undefined {
  const groups = expandIPv6(address);
  if (!groups) return undefined;
  const head = groups.slice(0, 5).every((g) => g === 0);
  if (!head || (groups[5] !== 0xffff && groups[5] !== 0)) return undefined;
  const high = groups[6] ?? 0;
  const low = groups[7] ?? 0;
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part is folded in). */
function expandIPv6(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const left = halves[0] ? halves[0].split(':') : [];
  const right = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  const groups = [...left, ...Array<string>(missing).fill('0'), ...right].map((g) => Number.parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff)
    ? groups
    : undefined;
}

/** Why an address is not a public destination, or undefined when it is one. */
export function nonPublicReason(address: string): string | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIPv4(bare)) return v4Blocked.check(bare, 'ipv4') ? `${bare} is not a public address` : undefined;
  if (!isIPv6(bare)) return `${bare} is not an IP address`;
  const v4 = embeddedIPv4(bare);
  if (v4 !== undefined) return `${bare} embeds ${v4}, which is not a public destination`;
  const groups = expandIPv6(bare);
  if (groups && groups[0] === 0x64 && groups[1] === 0xff9b) return `${bare} is a NAT64 address`;
  if (!v6GlobalUnicast.check(bare, 'ipv6') || v6Blocked.check(bare, 'ipv6')) {
    return `${bare} is not a public address`;
  }
  return undefined;
}
