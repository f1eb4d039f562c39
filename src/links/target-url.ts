import { invalid } from '../errors.ts';

export const URL_MAX = 2000;

// C0 and C1 controls, DEL, every Unicode space or line/paragraph separator, and the
// bidirectional controls (marks, embeddings, overrides, isolates): with those, a target can
// be displayed as another address than the one it leads to ("…/\u202Egnp.exe").
const FORBIDDEN_CHARACTER =
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
 * `ownOrigin` is the service's public origin: a link pointing back at it would loop.
 */
export function validateTargetUrl(url: string, ownOrigin: string, blockedHosts: readonly string[] = []): string {
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
  if (parsed.origin === ownOrigin) throw invalid('url must not point back at this service');
  if (blockedHosts.length > 0 && isBlockedHost(parsed.hostname, blockedHosts)) {
    throw invalid(`links to ${parsed.hostname} are not allowed on this service`);
  }
  return url;
}

/**
 * True when `hostname` (as the URL parser gives it: lower case, punycode) is one of the
 * blocked hosts or a subdomain of one.
 */
export function isBlockedHost(hostname: string, blockedHosts: readonly string[]): boolean {
  const host = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  for (const blocked of blockedHosts) {
    if (host === blocked || (host.length > blocked.length && host.endsWith(blocked) && host[host.length - blocked.length - 1] === '.')) {
      return true;
    }
  }
  return false;
}
