/**
 * Redaction for log lines: pure functions over text, with no state and no logger of their own,
 * so that whatever writes a line (the request log, an error line) can use them.
 *
 * A secret is recognised two ways: by its shape, wherever it appears (an access code is a
 * UUID; an API key is `slk_` and 43 base64url characters), and by the name it is sent under
 * (`auth`, `token`, `access_token`, `admin_token`, `password`, …), whatever its value looks
 * like (the admin and metrics tokens are free text).
 */

/**
 * An access code (a UUID), in any case, or an API key (`slk_` and base64url characters, however
 * cut short: a truncated key in a log is still most of a secret).
 */
const SECRET_SHAPE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|slk_[A-Za-z0-9_-]+/gi;
const SECRET_SHAPE_ONCE = new RegExp(SECRET_SHAPE.source, 'i');
export const REDACTED = '[REDACTED]';

/**
 * Parameter names that carry credentials, compared with case and everything but letters and
 * digits ignored: exactly these, or ending in one of the suffixes (`admin_token`,
 * `client_secret`, `x-api-key`). `author` or `keyword` are not among them.
 */
const CREDENTIAL_NAME = /^(?:auth|authorization|bearer|key|pass|passwd|pwd|session|sessionid|sid|sig|signature|jwt|credentials?)$|(?:token|secret|password|apikey|accesskey|accesscode)$/;

/** True when `name` (a query parameter's, raw or percent-encoded) is one that credentials travel under. */
export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(decodeFully(name).toLowerCase().replace(/[^a-z0-9]/g, ''));
}

/** True when `text` holds something shaped like a secret (a UUID, an API key) as it is, undecoded. */
export function holdsSecretShape(text: string): boolean {
  return SECRET_SHAPE_ONCE.test(text);
}

/**
 * A request URL fit for a log: anything that reads as a secret's shape once percent-decoded
 * (any number of times, anywhere: path, parameter names or values, whatever the separators)
 * and the value of every parameter with a credential-like name are replaced, so a secret sent
 * in the wrong place, or disguised, still never reaches a log line in a form a reader could
 * decode.
 */
export function redactUrl(url: string): string {
  const question = url.indexOf('?');
  let result = url;
  if (question !== -1) {
    // `;` too: some parsers split on it, and a log reader may.
    const pairs = url.slice(question + 1).split(/([&;])/);
    for (let i = 0; i < pairs.length; i += 2) {
      const pair = pairs[i]!;
      const equals = pair.indexOf('=');
      const rawName = equals === -1 ? pair : pair.slice(0, equals);
      if (isCredentialName(rawName)) pairs[i] = `${rawName}=${REDACTED}`;
    }
    result = `${url.slice(0, question)}?${pairs.join('')}`;
  }
  return redactDecodedUuids(result);
}

function decodeFully(raw: string): string {
  let text = raw.replaceAll('+', ' ');
  for (let round = 0; round < 8 && text.includes('%'); round++) {
    const next = text.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (next === text) break;
    text = next;
  }
  return text;
}

/**
 * Finds secret-shaped text in the URL as a reader would see it after percent-decoding it (once or
 * repeatedly: `%2539` reads `%39`, then `9`) and replaces the raw characters it came from.
 * Each decoded character remembers the span of raw text it stands for, so a match maps back
 * exactly and the rest of the URL stays as it was.
 */
function redactDecodedUuids(url: string): string {
  // Fast path: with no `%` there is nothing to decode.
  if (!url.includes('%')) return url.replace(SECRET_SHAPE, REDACTED);
  // Decoding only replaces `%xx` (and `%` is no secret's character), so a shape seen after any
  // round of decoding is still there after the last: when the fully decoded text holds none,
  // no round does, and the URL stays as it is (the usual case: an encoded target URL).
  if (!SECRET_SHAPE_ONCE.test(decodeFully(url))) return url;

  let chars = [...url].map((char, index) => ({ char, start: index, end: index + 1 }));
  // Positions are UTF-16 offsets; `[...url]` splits by code point, so fix them up.
  let offset = 0;
  for (const unit of chars) {
    unit.start = offset;
    offset += unit.char.length;
    unit.end = offset;
  }
  const spans: Array<[number, number]> = [];
  const collect = () => {
    const text = chars.map((unit) => (unit.char.length === 1 ? unit.char : '\u0000')).join('');
    for (const match of text.matchAll(SECRET_SHAPE)) {
      spans.push([chars[match.index]!.start, chars[match.index + match[0].length - 1]!.end]);
    }
  };
  collect();
  for (let round = 0; round < 8; round++) {
    const next: typeof chars = [];
    let changed = false;
    for (let i = 0; i < chars.length; i++) {
      const unit = chars[i]!;
      const high = chars[i + 1];
      const low = chars[i + 2];
      if (unit.char === '%' && high !== undefined && low !== undefined && /^[0-9a-f]{2}$/i.test(high.char + low.char)) {
        // A byte above 0x7f is part of a multi-byte character, never a secret's character.
        const byte = parseInt(high.char + low.char, 16);
        next.push({ char: byte < 0x80 ? String.fromCharCode(byte) : '\u0000', start: unit.start, end: low.end });
        i += 2;
        changed = true;
      } else {
        next.push(unit);
      }
    }
    if (!changed) break;
    chars = next;
    collect();
  }
  if (spans.length === 0) return url;
  spans.sort((a, b) => a[0] - b[0]);
  let result = '';
  let cursor = 0;
  for (const [start, end] of spans) {
    if (end <= cursor) continue;
    result += url.slice(cursor, Math.max(cursor, start)) + (start >= cursor ? REDACTED : '');
    cursor = end;
  }
  return result + url.slice(cursor);
}

/**
 * Any other text fit for a log (a User-Agent): whatever reads as a secret's shape, once
 * percent-decoded or as it is, is replaced as in a URL.
 */
export function redactText(text: string): string {
  return redactDecodedUuids(text);
}
