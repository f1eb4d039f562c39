/**
 * A link's key: how storage, the group commit, caches and events name one link (ADR 26).
 * A shortcode is unique per domain (CONTRACT §8.1), so a link is its domain and its code: on
 * the default domain the key is the code itself; on a registered domain it is `host/code`.
 * Neither a host nor a shortcode can hold '/', so the split is unambiguous, and a code on
 * the default domain (nearly every link) costs nothing to key.
 *
 * Store records carry the key in `shortCode`; whatever answers a client splits it
 * (`codeOf`, `domainOf`).
 */

/** The key of `code` on `domain` (a registered host, or null/'' for the default domain). */
export function linkKey(domain: string | null | undefined, code: string): string {
  return domain === null || domain === undefined || domain === '' ? code : `${domain}/${code}`;
}

/** The shortcode a key names. */
export function codeOf(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(slash + 1);
}

/** The host of a key's domain, or null for the default domain. */
export function domainOf(key: string): string | null {
  const slash = key.indexOf('/');
  return slash < 0 ? null : key.slice(0, slash);
}

/**
 * The first and the past-the-end key of a domain's links, for a range scan on the unique
 * index: every `host/…` key sorts at or after `host/` and before `host0` ('0' follows '/').
 */
export function keyRange(host: string): readonly [string, string] {
  return [`${host}/`, `${host}0`];
}

/**
 * A group-commit key that counts a protected link's access once its password has been checked
 * (CONTRACT §8.3): any other access to a protected link is refused with `password`. '!' is in
 * neither a host nor a shortcode.
 */
export const UNLOCKED = '!';
