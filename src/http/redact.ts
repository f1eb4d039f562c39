const UUID_ANYWHERE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const REDACTED = '[REDACTED]';

/**
 * A request URL fit for a log: the value of every `auth` parameter (however its name is
 * percent-encoded) and anything shaped like a UUID are replaced, so an access code sent in
 * the wrong place still never reaches a log line.
 */
export function redactUrl(url: string): string {
  const question = url.indexOf('?');
  let result = url;
  if (question !== -1) {
    const pairs = url.slice(question + 1).split('&');
    for (let i = 0; i < pairs.length; i++) {
      const pair = pairs[i]!;
      const equals = pair.indexOf('=');
      const rawName = equals === -1 ? pair : pair.slice(0, equals);
      if (decodeName(rawName) === 'auth') pairs[i] = `${rawName}=${REDACTED}`;
    }
    result = `${url.slice(0, question)}?${pairs.join('&')}`;
  }
  return result.replace(UUID_ANYWHERE, REDACTED);
}

function decodeName(raw: string): string {
  if (!raw.includes('%') && !raw.includes('+')) return raw;
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return raw;
  }
}
