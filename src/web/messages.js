// What the page says when a call fails: one table from the API's error texts (CONTRACT §3,
// `Unable to <operation>: <reason>`) to plain words and the field they concern. Every view
// asks here (describeError) rather than matching error texts itself. A reason the table does
// not know is shown as the API wrote it, after the operation's own words.
// Pure: no page access, so it runs in Node too (test/web/messages.test.ts).

/**
 * The fields an error can be about: a form shows it beside that input; 'form' on the form's
 * own line.
 * @typedef {'url' | 'short' | 'title' | 'tags' | 'expires' | 'max_visits' | 'domain' | 'forward_query' | 'rules' | 'password' | 'events' | 'name' | 'scopes' | 'code' | 'form'} Field
 */

/**
 * One row: the reason's pattern, the field, and the words (a function of the match, for the
 * numbers and names the API puts in).
 * @typedef {{ reason: RegExp, field: Field, text: (match: RegExpExecArray) => string }} MessageRow
 */

/** @type {readonly MessageRow[]} */
export const MESSAGES = [
  // Target URL.
  { reason: /^(?:url must not be empty|the parameter "url" (?:is required|must not be empty))$/, field: 'url', text: () => 'Enter the address the short link should lead to.' },
  { reason: /^url is not a valid absolute URL$/, field: 'url', text: () => 'This is not a web address. Enter one like example.com/page.' },
  { reason: /^url must use http or https$/, field: 'url', text: () => 'Only http:// and https:// addresses can be shortened.' },
  { reason: /^url must name a host$/, field: 'url', text: () => 'The address needs a host name, like example.com.' },
  { reason: /^url must not contain a user name or password$/, field: 'url', text: () => 'Take the user name and password out of the address: they would be visible to everyone.' },
  { reason: /^url must not contain whitespace or control characters$/, field: 'url', text: () => 'The address contains spaces or invisible characters. Remove them.' },
  { reason: /^url must be well-formed Unicode text$/, field: 'url', text: () => 'The address contains characters that cannot be read. Paste it again.' },
  { reason: /^url must be at most ([\d,]+) characters long$/, field: 'url', text: (m) => `The address is too long: at most ${m[1]} characters.` },
  { reason: /^url must not point back at this service$/, field: 'url', text: () => 'This address is already a short link of this service: a link to it would loop.' },
  { reason: /^links to (.+) are not allowed on this service$/, field: 'url', text: (m) => `This service does not allow links to ${m[1]}.` },
  { reason: /^the host of url cannot be resolved \((.*)\)$/, field: 'url', text: (m) => `The host ${m[1]} does not exist. Check the address.` },
  { reason: /^url must not point at a loopback, private or link-local address/, field: 'url', text: () => 'The receiver must be reachable from the internet: local and private addresses are refused.' },
  // Shortcode.
  { reason: /^the shortcode "(.*)" is already taken$/, field: 'short', text: (m) => `The shortcode "${m[1]}" is already taken. Choose another, or leave it empty for a random one.` },
  { reason: /^(?:short|the shortcode) may contain only the characters/, field: 'short', text: () => 'A shortcode may hold only letters, digits and - . _ ~ (no spaces or slashes).' },
  { reason: /^short must be (\d+) to (\d+) characters long$/, field: 'short', text: (m) => `A shortcode has ${m[1]} to ${m[2]} characters.` },
  { reason: /^the shortcode must be at most (\d+) characters long$/, field: 'short', text: (m) => `A shortcode has at most ${m[1]} characters.` },
  { reason: /^short "(.*)" is reserved by the service$|^the shortcode "(.*)" is a reserved path of this service/, field: 'short', text: (m) => `"${m[1] ?? m[2]}" is a name the service uses itself. Choose another shortcode.` },
  { reason: /^the shortcode "(.*)" cannot be reached/, field: 'short', text: () => 'A shortcode cannot be "." or "..": browsers would never reach it.' },
  // Title and tags.
  { reason: /^title must be at most (\d+) characters long$/, field: 'title', text: (m) => `The title is too long: at most ${m[1]} characters.` },
  { reason: /^title must not contain control characters$/, field: 'title', text: () => 'The title contains invisible control characters. Remove them.' },
  { reason: /^tags may hold at most (\d+) tags$/, field: 'tags', text: (m) => `A link has at most ${m[1]} tags.` },
  { reason: /^tags must not contain an empty tag$/, field: 'tags', text: () => 'One of the tags is empty: remove the extra comma.' },
  { reason: /^each tag must be (\d+) to (\d+) characters from/, field: 'tags', text: (m) => `Each tag has ${m[1]} to ${m[2]} characters: letters, digits, - _ and . (no spaces).` },
  // Expiry and visit limit.
  { reason: /^expires must be in the future$/, field: 'expires', text: () => 'The expiry is in the past. Choose a later date and time.' },
  { reason: /^expires must be before the year 10000$/, field: 'expires', text: () => 'The expiry is too far away: choose a date before the year 10000.' },
  { reason: /^expires (?:is not a valid date and time|must be an RFC 3339 time)/, field: 'expires', text: () => 'The expiry is not a complete date and time.' },
  { reason: /^max_visits must be a whole number from 1 to ([\d,]+)$/, field: 'max_visits', text: (m) => `The visit limit is a whole number from 1 to ${m[1]}.` },
  // Domains, routing and passwords (CONTRACT §8).
  { reason: /^the domain "(.*)" is not registered$/, field: 'domain', text: (m) => `The domain ${m[1]} is not registered on this service. Pick another.` },
  { reason: /^rules may hold at most (\d+) rules$/, field: 'rules', text: (m) => `A link has at most ${m[1]} rules.` },
  { reason: /^rule (\d+): "if" must hold at least one condition$/, field: 'rules', text: (m) => `Rule ${m[1]} has no condition: fill in at least one, or remove the rule.` },
  { reason: /^rule (\d+): "to" must not be empty$|^rule (\d+): "to" must be the target URL/, field: 'rules', text: (m) => `Rule ${m[1] ?? m[2]} needs an address to send visitors to.` },
  { reason: /^rules? \d*\b.*$/, field: 'rules', text: (m) => sentence(m[0]) },
  { reason: /^password must be (\d+) to (\d+) characters long$/, field: 'password', text: (m) => `A password has ${m[1]} to ${m[2]} characters.` },
  { reason: /^a password is required$/, field: 'form', text: () => 'This link is protected by a password: open it in a browser to type it.' },
  { reason: /^the password is wrong$/, field: 'form', text: () => 'The password is wrong.' },
  // Editing.
  { reason: /^give at least one of /, field: 'form', text: () => 'Nothing was changed.' },
  // Accounts and links.
  { reason: /^the account already holds its maximum of (\d+) links$/, field: 'form', text: (m) => `Your account is full: it holds its maximum of ${m[1]} ${m[1] === '1' ? 'link' : 'links'}. Delete one to make room.` },
  { reason: /^the account is disabled$/, field: 'form', text: () => 'The operator has disabled this account: it can make no changes.' },
  { reason: /^no link has this shortcode$/, field: 'form', text: () => 'There is no link with this shortcode (it may have been deleted).' },
  { reason: /^the link belongs to another account$/, field: 'form', text: () => 'This link belongs to another account.' },
  { reason: /^registration is closed$/, field: 'form', text: () => 'This service does not take new accounts. Ask its operator for one.' },
  { reason: /^(?:the access code is not valid|an access code is required|the Authorization header .*)$/, field: 'code', text: () => 'This access code does not open any account. Check it and try again.' },
  // Search.
  { reason: /^q must be at most (\d+) characters long$/, field: 'form', text: (m) => `The search is too long: at most ${m[1]} characters.` },
  { reason: /^q must not contain control characters$/, field: 'form', text: () => 'The search contains invisible control characters.' },
  { reason: /^cursor is not valid$/, field: 'form', text: () => 'The list changed while it was paged. Refresh it.' },
  // Statistics.
  { reason: /^the parameter "from" must be before "to"$/, field: 'form', text: () => 'The period ends before it starts.' },
  { reason: /^the period holds more than (\d+) (\w+)s/, field: 'form', text: (m) => `That period has more than ${m[1]} ${m[2]}s: choose a shorter one or count by a longer interval.` },
  // Webhooks.
  { reason: /^the account already holds its maximum of (\d+) webhooks$/, field: 'form', text: (m) => `An account has at most ${m[1]} webhooks. Delete one first.` },
  { reason: /^the parameter "events" is required$/, field: 'events', text: () => 'Pick at least one event.' },
  { reason: /^events must be a comma-separated list/, field: 'events', text: () => 'One of the events is not known to the service.' },
  { reason: /^no webhook has this id$/, field: 'form', text: () => 'This webhook no longer exists (it may have been deleted).' },
  // API keys.
  { reason: /^the account already holds its maximum of (\d+) API keys$/, field: 'form', text: (m) => `An account has at most ${m[1]} API keys. Delete one you no longer use first.` },
  { reason: /^the parameter "name" is required$/, field: 'name', text: () => 'Give the key a name, such as the script or service that will use it.' },
  { reason: /^name must be at most ([\d,]+) characters long$/, field: 'name', text: (m) => `The name is too long: at most ${m[1]} characters.` },
  { reason: /^name must not contain control characters$/, field: 'name', text: () => 'The name contains invisible control characters. Remove them.' },
  { reason: /^the parameter "scopes" is required$/, field: 'scopes', text: () => 'Pick at least one thing the key may do.' },
  { reason: /^unknown scope /, field: 'scopes', text: () => 'One of the permissions is not known to the service.' },
  { reason: /^no API key of this account has this id$/, field: 'form', text: () => 'This key no longer exists (it may have been deleted).' },
  { reason: /^the key does not allow this$/, field: 'form', text: () => 'The key used does not allow this: use the access code, or a key with the needed permission.' },
  // Anything else about one parameter: the API's sentence, beside its field.
  { reason: /^(url|short|title|tags|expires|max_visits|domain|forward_query|password|events)\b.*$/, field: 'form', text: (m) => sentence(m[0]) },
];

/**
 * The API's reason as a sentence of its own.
 * @param {string} reason
 */
function sentence(reason) {
  const text = `${reason.charAt(0).toUpperCase()}${reason.slice(1)}`;
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** Words for a status when the reason is not in the table. */
const BY_STATUS = /** @type {Record<number, string>} */ ({
  0: 'The service could not be reached. Check the connection and try again.',
  401: 'This access code does not open any account. Sign in again.',
  413: 'What was sent is too large.',
  429: 'Too many attempts in a short time. Wait a moment and try again.',
  500: 'The service ran into a problem. Try again in a moment.',
  503: 'The service is busy or its storage is unavailable. Try again in a moment.',
});

/**
 * What to show for a failed call, and beside which field.
 * @param {number} status the HTTP status (0: no answer)
 * @param {string} line the API's error line
 * @returns {{ field: Field, text: string }}
 */
export function describeError(status, line) {
  const colon = line.indexOf(': ');
  const reason = line.startsWith('Unable to ') && colon !== -1 ? line.slice(colon + 2) : line;
  for (const row of MESSAGES) {
    const match = row.reason.exec(reason);
    if (match === null) continue;
    // The catch-all row names its field in the reason's first word.
    const field = row.field === 'form' && row.reason.source.startsWith('^(url|') ? /** @type {Field} */ (match[1]) : row.field;
    return { field, text: row.text(match) };
  }
  if (status === 429) {
    return { field: 'form', text: BY_STATUS[429] ?? '' };
  }
  const known = BY_STATUS[status];
  if (known !== undefined && (status === 0 || status >= 500 || status === 401)) return { field: status === 401 ? 'code' : 'form', text: known };
  // Unknown reason: the API's own sentence, which already says what to change.
  return { field: 'form', text: reason === '' ? `The service answered ${status}.` : sentence(reason) };
}
