import { invalid } from '../errors.ts';
import { createHostList, pointsAtService, type HostList } from './host-rules.ts';

export const URL_MAX = 2000;

// C0 and C1 controls, DEL, every Unicode space or line/paragraph separator, and the
// bidirectional controls (marks, embeddings, overrides, isolates): with those, a target can
// be displayed as another address than the one it leads to ("…/\u202Egnp.exe").
const FORBIDDEN_CHARACTER =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u0020\u007f-\u009f\u00a0\u061c\u1680\u2000-\u200a\u200e\u200f\u2028-\u202f\u205f\u2066-\u2069\u3000\ufeff]/;

/** Counts Unicode code points without building an array. */
export function codePointLength(text: string): number {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // A high surrogate followed by a low one is a single code point.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    length++;
  }
  return length;
}

/**
 * Checks a target URL and returns it unchanged, or throws an invalid-parameter error.
 * `ownOrigin` is the service's public origin and `selfHosts` the other names it answers to: a
 * link pointing back at the service would loop (see pointsAtService). `blockedHosts` are
 * canonical entries (config.ts reads them with parseHostEntry).
 */
export function validateTargetUrl(url: string, ownOrigin: string, blockedHosts: readonly string[] = [], selfHosts: readonly string[] = []): string {
  if (url.length === 0) throw invalid('url must not be empty');
  if (url.length > URL_MAX && codePointLength(url) > URL_MAX) {
    throw invalid(`url must be at most ${URL_MAX} characters long`);
  }
  if (FORBIDDEN_CHARACTER.test(url)) {
    throw invalid('url must not contain whitespace or control characters');
  }
  // A lone surrogate cannot be encoded as UTF-8: storage would replace it with U+FFFD and
  // the link would no longer point where the caller asked.
  if (!url.isWellFormed()) throw invalid('url must be well-formed Unicode text');
  const parsed = URL.parse(url);
  if (parsed === null) throw invalid('url is not a valid absolute URL');
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw invalid('url must use http or https');
  }
  if (parsed.hostname === '') throw invalid('url must name a host');
  if (parsed.username !== '' || parsed.password !== '') {
    // `https://trusted.example@evil.example/` is a classic phishing disguise.
    throw invalid('url must not contain a user name or password');
  }
  if (pointsAtService(parsed, ownOrigin, selfHosts)) throw invalid('url must not point back at this service');
  if (blockedHosts.length > 0 && isBlockedHost(parsed.hostname, blockedHosts)) {
    throw invalid(`links to ${parsed.hostname} are not allowed on this service`);
  }
  return url;
}

// The configuration's list is frozen and lives as long as the process: build its matcher once.
const compiled = new WeakMap<readonly string[], HostList>();

/**
 * True when `hostname` (as the URL parser gives it: lower case, punycode) is one of the
 * blocked hosts or a subdomain of one, or an address in a blocked address or range (an
 * IPv4-mapped IPv6 address counts as its IPv4 address).
 */
export function isBlockedHost(hostname: string, blockedHosts: readonly string[]): boolean {
  let list = compiled.get(blockedHosts);
  if (list === undefined) {
    list = createHostList(blockedHosts);
    if (Object.isFrozen(blockedHosts)) compiled.set(blockedHosts, list);
  }
  return list.matches(hostname);
}
