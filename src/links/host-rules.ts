/**
 * Host comparisons for targets: blocked hosts and the service's own addresses. Hosts are
 * compared in the form the WHATWG URL parser gives them (lower case, punycode, IPv4 in dotted
 * decimal whatever its spelling: `0x7f.1`, `2130706433`, `0`), and IPv4-mapped IPv6 addresses
 * (`[::ffff:127.0.0.1]`) as the IPv4 address they reach; an IPv6 address that carries IPv4
 * addresses (NAT64, SIIT, 6to4, Teredo: ip-addresses.ts) matches a list by them too.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { embeddedIpv4s } from './ip-addresses.ts';

/** How an entry of BLOCKED_HOSTS or SELF_HOSTS is read; `range` allows CIDR notation. */
export interface HostEntryOptions {
  readonly range: boolean;
}

/**
 * Reads one configured host and returns it in canonical form (a name in punycode without a
 * trailing dot, an IPv4 address in dotted decimal, an IPv6 address without brackets, or a
 * range `address/prefix`), or `{ problem }` when it could never match a target's host: a
 * port, a scheme, a path, a prefix that is out of range.
 */
export function parseHostEntry(raw: string, { range }: HostEntryOptions): string | { problem: string } {
  const text = raw.trim().toLowerCase();
  const slash = text.lastIndexOf('/');
  if (range && slash !== -1 && !text.includes('://')) {
    const address = unbracket(text.slice(0, slash));
    const prefix = text.slice(slash + 1);
    const max = isIPv4(address) ? 32 : isIPv6(address) ? 128 : 0;
    if (max > 0 && /^\d{1,3}$/.test(prefix) && Number(prefix) <= max) return `${canonicalAddress(address)}/${Number(prefix)}`;
    return { problem: 'is not a host name, an address or a CIDR range of addresses' };
  }
  const inner = unbracket(text);
  if (isIPv6(inner)) return canonicalAddress(inner);
  const name = text.replace(/^\*?\./, '').replace(/\.$/, '');
  // A port, a scheme, a path, credentials, a query: a target's host never contains them.
  if (/[:/?#@\\\s]/.test(name) || name === '') return { problem: 'is not a host name or an address (no scheme, port or path)' };
  const parsed = URL.parse(`http://${name}/`);
  if (parsed === null) return { problem: 'is not a valid host name' };
  return parsed.hostname;
}

function unbracket(text: string): string {
  return text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
}

/** The address as the URL parser writes it (IPv6 compressed, IPv4 dotted decimal), unbracketed. */
function canonicalAddress(address: string): string {
  return unbracket(URL.parse(`http://${isIPv6(address) ? `[${address}]` : address}/`)?.hostname ?? address);
}

/**
 * A target's host (`URL.hostname`) as compared here: no trailing dot, IPv6 without brackets,
 * and an IPv4-mapped IPv6 address as its IPv4 address.
 */
export function canonicalHost(hostname: string): string {
  const host = unbracket(hostname.endsWith('.') ? hostname.slice(0, -1) : hostname);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped) {
    const high = parseInt(mapped[1]!, 16);
    const low = parseInt(mapped[2]!, 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return host;
}

function familyOf(host: string): 'ipv4' | 'ipv6' | undefined {
  return isIPv4(host) ? 'ipv4' : isIPv6(host) ? 'ipv6' : undefined;
}

/** Checks hosts against a list of canonical entries (names with their subdomains, addresses, ranges). */
export interface HostList {
  matches(hostname: string): boolean;
}

/** Builds a HostList from entries in the form parseHostEntry returns. */
export function createHostList(entries: readonly string[]): HostList {
  const names: string[] = [];
  const addresses = new BlockList();
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    const address = slash === -1 ? entry : entry.slice(0, slash);
    const family = familyOf(address);
    if (family === undefined) names.push(entry);
    else if (slash === -1) addresses.addAddress(address, family);
    else addresses.addSubnet(address, Number(entry.slice(slash + 1)), family);
  }
  return {
    matches(hostname) {
      const host = canonicalHost(hostname);
      const family = familyOf(host);
      // BlockList compares an IPv4-mapped IPv6 address with IPv4 rules too; the other forms
      // that lead to an IPv4 address (`[64:ff9b::7f00:1]`, `[2002:7f00:1::]`) are checked by it.
      if (family === 'ipv6') return addresses.check(host, family) || embeddedIpv4s(host).some((v4) => addresses.check(v4, 'ipv4'));
      if (family !== undefined) return addresses.check(host, family);
      return names.some((name) => host === name || (host.length > name.length && host.endsWith(name) && host[host.length - name.length - 1] === '.'));
    },
  };
}

// 0.0.0.0/8 too: on Linux a connection to 0.0.0.0 (`http://0/`) reaches this machine.
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addSubnet('0.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addAddress('::', 'ipv6');

/** True for every spelling of this machine: `localhost` and its subdomains, 127/8, 0/8, `::1`, `::`. */
export function isLoopbackHost(hostname: string): boolean {
  const host = canonicalHost(hostname);
  const family = familyOf(host);
  if (family !== undefined) return LOOPBACK.check(host, family);
  return host === 'localhost' || host.endsWith('.localhost');
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'http:': '80', 'https:': '443' };

/**
 * True when `target` would reach this service: on the own port or a default port, under either
 * scheme (behind the usual HTTP→HTTPS redirect, `http://sho.rt/x` loops as surely as
 * `https://sho.rt/x`), its host is the own origin's host or one of `selfHosts`, or, when the
 * service answers on a loopback host, any spelling of loopback (`127.1.2.3`, `[::1]`, `0`…: all
 * of them are this machine). Another port is another service, even on this machine.
 */
export function pointsAtService(target: URL, ownOrigin: string, selfHosts: readonly string[] = []): boolean {
  const own = URL.parse(ownOrigin);
  if (own === null) return false;
  const hosts = [canonicalHost(own.hostname), ...selfHosts.map(canonicalHost)];
  const port = target.port || DEFAULT_PORTS[target.protocol];
  if (port !== '80' && port !== '443' && port !== (own.port || DEFAULT_PORTS[own.protocol])) return false;
  const targetHost = canonicalHost(target.hostname);
  return hosts.includes(targetHost) || (hosts.some(isLoopbackHost) && isLoopbackHost(targetHost));
}
