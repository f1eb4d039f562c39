// Access codes (UUIDs) and API keys (`slk_` and base64url, however cut short).
const UUID_SHAPE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|slk_[A-Za-z0-9_-]+/gi;
const REDACTED = '[REDACTED]';

/**
 * A request URL fit for a log: anything that reads as a UUID once percent-decoded (any number
 * of times, anywhere: path, parameter names or values, whatever the separators) and the value
 * of every `auth`-like parameter are replaced, so an access code sent in the wrong place, or
 * disguised, still never reaches a log line in a form a reader could decode.
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
      if (looksLikeAuth(rawName)) pairs[i] = `${rawName}=${REDACTED}`;
    }
    result = `${url.slice(0, question)}?${pairs.join('')}`;
  }
  return redactDecodedUuids(result);
}

/** `auth` however it is spelt: encoded, with `+`, spaces, NULs or other marks around it, in any case. */
function looksLikeAuth(rawName: string): boolean {
  return decodeFully(rawName).toLowerCase().replace(/[^a-z0-9]/g, '') === 'auth';
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
 * Finds UUID-shaped text in the URL as a reader would see it after percent-decoding it (once or
 * repeatedly: `%2539` reads `%39`, then `9`) and replaces the raw characters it came from.
 * Each decoded character remembers the span of raw text it stands for, so a match maps back
 * exactly and the rest of the URL stays as it was.
 */
function redactDecodedUuids(url: string): string {
  // Fast path: with no `%` there is nothing to decode.
  if (!url.includes('%')) return url.replace(UUID_SHAPE, REDACTED);

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
    for (const match of text.matchAll(UUID_SHAPE)) {
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
        // A byte above 0x7f is part of a multi-byte character, never a UUID character.
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
 * Any other text fit for a log (a User-Agent): whatever reads as a UUID, as an access code
 * does, once percent-decoded or as it is, is replaced as in a URL.
 */
export function redactText(text: string): string {
  return redactDecodedUuids(text);
}
