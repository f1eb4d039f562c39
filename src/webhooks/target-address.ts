/**
 * Where a webhook may be delivered (CONTRACT §7.5): never to loopback, private, shared (CGNAT),
 * link-local (cloud metadata lives there), multicast, unspecified or reserved addresses, in
 * IPv4 or IPv6 (IPv4-mapped and NAT64 forms judged by their IPv4 address). Checked at creation
 * (a literal address, or every address the name resolves to) and again at each delivery
 * after DNS, where the connection goes to the address that was checked: a name that changes
 * its answer between the two (DNS rebinding) gains nothing. WEBHOOK_ALLOW_PRIVATE=true lifts
 * the rule (tests, closed networks).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const refused = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) refused.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
  // IPv4-compatible (deprecated) addresses.
  ['::', 96],
] as const) refused.addSubnet(network, prefix, 'ipv6');

/** The IPv4 address an IPv6 address carries (v4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`), if any. */
function embeddedIpv4(address: string): string | undefined {
  const normalised = new URL(`http://[${address}]`).hostname.slice(1, -1);
  const match = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(normalised);
  if (match === null) return undefined;
  const high = Number.parseInt(match[1]!, 16);
  const low = Number.parseInt(match[2]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** True when a webhook may be delivered to this literal address. */
export function isPublicAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare);
  if (family === 4) return !refused.check(bare, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    if (v4 !== undefined) return !refused.check(v4, 'ipv4');
    return !refused.check(bare, 'ipv6');
  }
  return false;
}

/** Resolves a name to every address, as the connection would (dns.lookup: hosts file, then DNS). */
export type ResolveAll = (hostname: string) => Promise<LookupAddress[]>;

export const resolveAll: ResolveAll = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

export class RefusedTarget extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedTarget';
  }
}

/**
 * The addresses of `hostname` a delivery may connect to: all it resolves to, each allowed;
 * throws RefusedTarget when one is not (a name with one private answer is refused whole).
 */
export async function checkedAddresses(hostname: string, allowPrivate: boolean, resolve: ResolveAll = resolveAll): Promise<LookupAddress[]> {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  const family = isIP(bare);
  const addresses = family !== 0 ? [{ address: bare, family }] : await resolve(bare);
  if (addresses.length === 0) throw new RefusedTarget(`${hostname} does not resolve`);
  if (!allowPrivate) {
    const bad = addresses.find((entry) => !isPublicAddress(entry.address));
    if (bad !== undefined) throw new RefusedTarget(`${hostname} resolves to ${bad.address}, a loopback, private or link-local address`);
  }
  return addresses;
}
