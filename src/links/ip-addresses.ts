/**
 * The one judgement of literal IP addresses that the service reaches on someone's behalf:
 * which IPv4 addresses an IPv6 address carries, and which addresses are not public (loopback,
 * private, shared, link-local, multicast, unspecified, reserved). Webhook targets
 * (webhooks/target-address.ts) are refused by it; link targets' BLOCKED_HOSTS ranges
 * (host-rules.ts) match an IPv6 address by the IPv4 addresses it carries too. An IPv6 form
 * that leads to an IPv4 address (through NAT64, SIIT, 6to4 or Teredo relays, or the host's
 * own stack) is judged by that address: `[64:ff9b:1::7f00:1]` is 127.0.0.1 as surely as
 * `[::ffff:127.0.0.1]` is.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

const notPublic = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) notPublic.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
  // IPv4-compatible addresses (deprecated by RFC 4291): refused whole, whatever they carry.
  ['::', 96],
] as const) notPublic.addSubnet(network, prefix, 'ipv6');

/** The 16 bytes of an IPv6 address (a zone `%eth0` ignored), or undefined when it is not one. */
export function ipv6Bytes(address: string): Uint8Array | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!isIPv6(bare)) return undefined;
  let text = bare.replace(/%.*$/, '').toLowerCase();
  // A trailing dotted quad (`::ffff:127.0.0.1`) becomes two groups.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad !== null) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const front = groupsOf(head);
  const back = tail === undefined ? [] : groupsOf(tail);
  const groups = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 255;
  });
  return bytes;
}

function ipv4At(bytes: Uint8Array, ...at: number[]): string {
  return at.map((i) => bytes[i]!).join('.');
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((byte, i) => bytes[i] === byte);
}

const ZERO_10 = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/**
 * The IPv4 addresses an IPv6 address leads to, by the forms that embed one:
 * IPv4-mapped `::ffff:0:0/96`, SIIT `::ffff:0:0:0/96` (RFC 2765), IPv4-compatible `::/96`,
 * NAT64 `64:ff9b::/96` (RFC 6052) and the local-use `64:ff9b:1::/48` (RFC 8215, whose
 * operator may embed at any of RFC 6052's prefix lengths /48, /56, /64 or /96: all four are
 * answered), 6to4 `2002::/16` (bits 16–47), Teredo `2001::/32` (its server, bits 32–63, and
 * its client, the last 32 bits inverted). Empty for every other address, and for IPv4.
 */
export function embeddedIpv4s(address: string): string[] {
  const b = ipv6Bytes(address);
  if (b === undefined) return [];
  const last = ipv4At(b, 12, 13, 14, 15);
  if (startsWith(b, [...ZERO_10, 0xff, 0xff])) return [last];
  if (startsWith(b, [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0])) return [last];
  if (startsWith(b, [...ZERO_10, 0, 0])) return [last];
  if (startsWith(b, [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) return [last];
  if (startsWith(b, [0, 0x64, 0xff, 0x9b, 0, 1])) {
    // RFC 6052 §2.2: the u-octet (bits 64–71, byte 8) is skipped.
    return [...new Set([ipv4At(b, 6, 7, 9, 10), ipv4At(b, 7, 9, 10, 11), ipv4At(b, 9, 10, 11, 12), last])];
  }
  if (startsWith(b, [0x20, 0x02])) return [ipv4At(b, 2, 3, 4, 5)];
  if (startsWith(b, [0x20, 0x01, 0, 0])) {
    const client = [12, 13, 14, 15].map((i) => b[i]! ^ 0xff).join('.');
    return [ipv4At(b, 4, 5, 6, 7), client];
  }
  return [];
}

/**
 * True when the service may send a request to this literal address on a user's behalf: not
 * loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7), shared (100.64/10), link-local
 * (169.254/16, fe80::/10), multicast, unspecified or reserved, and, for an IPv6 address, none
 * of the IPv4 addresses it carries (embeddedIpv4s) is one of those. Anything not an address
 * (a name) is false.
 */
export function isPublicAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIPv4(bare)) return !notPublic.check(bare, 'ipv4');
  if (!isIPv6(bare)) return false;
  if (notPublic.check(bare.replace(/%.*$/, ''), 'ipv6')) return false;
  return embeddedIpv4s(bare).every((v4) => !notPublic.check(v4, 'ipv4'));
}
