/**
 * Query forwarding (CONTRACT §8.2, `forward_query`): the redirect appends the visitor's query
 * string to the target's, joined with `&` if the target has a query, else `?`, and the
 * target's fragment stays last.
 */

// What a query may not hold as it stands: a `#` would end it early, and whitespace or control
// characters cannot go into a Location header. Clients do not send them (a request target
// cannot hold them), so this only ever changes a malformed request.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u0020#\u007f]/g;

function escapeUnsafe(character: string): string {
  return `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
}

/**
 * `target` (a normalised href, `new URL(x).href`) with the visitor's raw query string
 * `visitorQuery` (without its `?`) appended, passed through as it came: percent-encodings and
 * `+` unchanged, so the receiver decodes exactly what the visitor sent. An empty visitor
 * query leaves the target unchanged. A target with an empty query (`…/p?`) or one that ends
 * in `&` takes the visitor's query without another separator.
 */
export function withVisitorQuery(target: string, visitorQuery: string): string {
  if (visitorQuery === '') return target;
  const query = visitorQuery.replace(UNSAFE, escapeUnsafe);
  // In an href the first `#` starts the fragment, and a `?` before it starts the query.
  const hash = target.indexOf('#');
  const end = hash === -1 ? target.length : hash;
  const question = target.indexOf('?');
  let separator: string;
  if (question === -1 || question > end) separator = '?';
  else if (question === end - 1 || target[end - 1] === '&') separator = '';
  else separator = '&';
  return `${target.slice(0, end)}${separator}${query}${target.slice(end)}`;
}
