/**
 * Where a webhook may be delivered (CONTRACT §7.5): never to loopback, private, shared (CGNAT),
 * link-local (cloud metadata lives there), multicast, unspecified or reserved addresses, in
 * IPv4 or IPv6 (every IPv6 form that carries an IPv4 address, NAT64, SIIT, 6to4, Teredo,
 * judged by that address: links/ip-addresses.ts). Checked at creation
 * (a literal address, or every address the name resolves to) and again at each delivery
 * after DNS, where the connection goes to the address that was checked: a name that changes
 * its answer between the two (DNS rebinding) gains nothing. WEBHOOK_ALLOW_PRIVATE=true lifts
 * the rule (tests, closed networks).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { isPublicAddress } from '../links/ip-addresses.ts';

export { isPublicAddress };

/** Resolves a name to every address, as the connection would (dns.lookup: hosts file, then DNS). */
export type ResolveAll = (hostname: string) => Promise<LookupAddress[]>;

export const resolveAll: ResolveAll = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/**
 * The one reason an account reads when its target is refused after DNS, whatever the cause: a
 * loopback, private or link-local answer, a literal address of that kind, or no answer at
 * all. Telling them apart (`… resolves to 10.0.0.5`, "cannot be resolved") would let an
 * account probe the service's internal names; the detail goes to the log instead.
 */
export const NOT_PUBLIC = 'the url does not resolve to a public address';

/** A refusal's detail for the log (a RefusedTarget's message or the resolver's error), never shown to the account. */
export function refusalDetail(error: unknown): string {
  if (error instanceof RefusedTarget) return error.message;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}

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
