import { BlockList } from 'node:net';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { canonicalAddress } from '../rate-limit/client-key.ts';

/** How often the warning may repeat while the headers keep coming. */
export const FORWARDED_WARNING_INTERVAL_MS = 600_000;

/** Where reverse proxies usually connect from: loopback, private and link-local networks. */
const PROXY_NETWORKS = new BlockList();
for (const [network, bits] of [['127.0.0.0', 8], ['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['169.254.0.0', 16]] as const) {
  PROXY_NETWORKS.addSubnet(network, bits, 'ipv4');
}
for (const [network, bits] of [['::1', 128], ['fc00::', 7], ['fe80::', 10]] as const) PROXY_NETWORKS.addSubnet(network, bits, 'ipv6');

function fromProxyNetwork(address: string | undefined): boolean {
  if (address === undefined) return false;
  const canonical = canonicalAddress(address);
  return PROXY_NETWORKS.check(canonical, canonical.includes(':') ? 'ipv6' : 'ipv4');
}

/**
 * Without TRUST_PROXY, a proxy's X-Forwarded-For is ignored and every client behind it
 * shares the proxy's address (one rate-limit budget for all). A request from a loopback or
 * private peer carrying the header is the sign of it: say so, at most every 10 minutes.
 * Returns the check the onRequest hook runs (cheap: one or two header lookups per request).
 */
export function createForwardedWarning(log: FastifyBaseLogger, now: () => number = Date.now): (request: FastifyRequest) => void {
  let lastMs = -Infinity;
  return (request) => {
    const headers = request.headers;
    if (headers['x-forwarded-for'] === undefined && headers.forwarded === undefined) return;
    if (now() - lastMs < FORWARDED_WARNING_INTERVAL_MS) return;
    const peer = request.raw.socket?.remoteAddress;
    if (!fromProxyNetwork(peer)) return;
    lastMs = now();
    log.warn(
      { peer },
      `requests from ${peer} carry X-Forwarded-For/Forwarded but TRUST_PROXY is unset, so every client behind that proxy ` +
        `counts as ${peer} for rate limits: set TRUST_PROXY to the proxy's addresses (e.g. TRUST_PROXY=${peer}) or to true for ` +
        'proxies on loopback and private networks',
    );
  };
}
