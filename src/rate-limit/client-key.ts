/**
 * Who a rate limit counts: the client's address, with IPv6 clients grouped by network.
 * Anyone holding an IPv6 /64 (every home and cloud customer) can use 2^64 addresses, so a
 * per-address count would give them as many budgets; an IPv4 address is scarce enough.
 */
import { isIPv4, isIPv6 } from 'node:net';

const MAPPED_PREFIX = '::ffff:';

/**
 * The address in one spelling per client: an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`,
 * how a dual-stack socket reports an IPv4 peer) as plain IPv4, IPv6 fully expanded in lower
 * case without a zone, anything else unchanged.
 */
export function canonicalAddress(address: string): string {
  if (isIPv4(address)) return address;
  const groups = ipv6Groups(address);
  if (groups === undefined) return address;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  }
  return groups.map((g) => g.toString(16)).join(':');
}

/**
 * The rate-limit key of a client address: an IPv4 address (mapped ones included) as itself,
 * an IPv6 address as its network `<first prefixBits bits, the rest zero>/<prefixBits>`.
 */
export function createClientKey(prefixBits: number): (address: string) => string {
  return (address) => {
    if (isIPv4(address)) return address;
    if (address.startsWith(MAPPED_PREFIX) && isIPv4(address.slice(MAPPED_PREFIX.length))) return address.slice(MAPPED_PREFIX.length);
    const groups = ipv6Groups(address);
    if (groups === undefined) return address;
    if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) return canonicalAddress(address);
    const masked = groups.map((group, i) => {
      const bits = Math.min(16, Math.max(0, prefixBits - i * 16));
      return bits === 0 ? 0 : group & ((0xffff << (16 - bits)) & 0xffff);
    });
    return `${masked.map((g) => g.toString(16)).join(':')}/${prefixBits}`;
  };
}

/** The eight 16-bit groups of an IPv6 address, or undefined when it is not one. */
function ipv6Groups(raw: string): number[] | undefined {
  const address = raw.split('%', 1)[0]!;
  if (!isIPv6(address)) return undefined;
  const [head = '', tail] = address.split('::') as [string, string | undefined];
  const parse = (part: string): number[] => {
    if (part === '') return [];
    const out: number[] = [];
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const [a = 0, b = 0, c = 0, d = 0] = piece.split('.').map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else out.push(parseInt(piece, 16));
    }
    return out;
  };
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}
