// Redirect rules (CONTRACT §8.2) as the forms edit them: a draft per rule (the inputs' values),
// turned into the API's `rules` parameter and back from LinkDetails' `Rules`, and the
// preview's choice of target for one imagined visitor, with the service's first-match logic.
// Pure: no page access, so it runs in Node too (test/web/rules.test.ts).

/** @import { LinkDetails } from '../http/schemas.ts' */
/** @import { RuleInput } from './api.js' */

/** At most this many rules per link (CONTRACT §8.2). */
export const MAX_RULES = 10;

export const DEVICES = /** @type {const} */ (['desktop', 'mobile', 'tablet']);
export const OS_FAMILIES = /** @type {const} */ (['android', 'ios', 'windows', 'macos', 'linux']);

/** How each value reads on the page. */
export const VALUE_NAMES = /** @type {Record<string, string>} */ ({
  desktop: 'Desktop',
  mobile: 'Mobile',
  tablet: 'Tablet',
  android: 'Android',
  ios: 'iOS',
  windows: 'Windows',
  macos: 'macOS',
  linux: 'Linux',
});

/**
 * One rule as its inputs hold it: ticked devices and systems, countries and languages as typed
 * (comma-separated), query conditions as `name=value` lines, and the target.
 * @typedef {{ device: string[], os: string[], country: string, language: string, query: string, to: string }} RuleDraft
 */

/** @returns {RuleDraft} a rule with nothing filled in */
export function emptyDraft() {
  return { device: [], os: [], country: '', language: '', query: '', to: '' };
}

/**
 * A comma-separated list as typed ("de, AT ,") → its items.
 * @param {string} text
 */
export function listOf(text) {
  return text.split(',').map((item) => item.trim()).filter((item) => item !== '');
}

/**
 * `name=value` lines → name → values (a name on several lines accepts any of them). A line
 * without `=` names a parameter with an empty value.
 * @param {string} text
 * @returns {Record<string, string[]>}
 */
export function queryOf(text) {
  /** @type {Record<string, string[]>} */
  const query = Object.create(null);
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const eq = line.indexOf('=');
    const name = (eq === -1 ? line : line.slice(0, eq)).trim();
    const value = eq === -1 ? '' : line.slice(eq + 1).trim();
    const values = query[name] ?? [];
    if (!values.includes(value)) values.push(value);
    query[name] = values;
  }
  return query;
}

/**
 * A draft as the API's rule: only the conditions filled in (none at all is the service's to
 * refuse, with its own words).
 * @param {RuleDraft} draft
 * @returns {RuleInput}
 */
export function ruleOf(draft) {
  /** @type {RuleInput['if']} */
  const conditions = {};
  if (draft.device.length > 0) conditions.device = [...draft.device];
  if (draft.os.length > 0) conditions.os = [...draft.os];
  const country = listOf(draft.country);
  if (country.length > 0) conditions.country = country;
  const language = listOf(draft.language);
  if (language.length > 0) conditions.language = language;
  const query = queryOf(draft.query);
  if (Object.keys(query).length > 0) conditions.query = query;
  return { if: conditions, to: draft.to.trim() };
}

/**
 * A link's rule (LinkDetails `Rules`) as a draft for the inputs.
 * @param {LinkDetails['Rules'][number]} rule
 * @returns {RuleDraft}
 */
export function draftOf(rule) {
  const query = rule.If.query ?? {};
  return {
    device: [...(rule.If.device ?? [])],
    os: [...(rule.If.os ?? [])],
    country: (rule.If.country ?? []).join(', '),
    language: (rule.If.language ?? []).join(', '),
    query: Object.entries(query).flatMap(([name, values]) => values.map((value) => `${name}=${value}`)).join('\n'),
    to: rule.To,
  };
}

/**
 * Rules in a canonical text, so that an edit sends them only when they changed.
 * @param {RuleInput[]} rules
 */
export function rulesText(rules) {
  return JSON.stringify(rules.map((rule) => ({
    if: Object.fromEntries(Object.entries(rule.if).map(([name, value]) => [
      name,
      Array.isArray(value) ? value.map((v) => (name === 'country' ? v.toUpperCase() : v.toLowerCase())) : value,
    ])),
    to: rule.to,
  })));
}

/**
 * The visitor the preview imagines: a device class and system ('' unknown), a country (ISO
 * alpha-2, '' unknown), a language (primary subtag, '' none) and a query string.
 * @typedef {{ device: string, os: string, country: string, language: string, query: string }} Visitor
 */

/**
 * Whether every condition of a rule holds for the visitor, as the service judges it.
 * @param {RuleInput} rule
 * @param {Visitor} visitor
 */
export function matches(rule, visitor) {
  const holds = (/** @type {string} */ name, /** @type {string} */ value) => {
    const wanted = rule.if[name];
    if (wanted === undefined) return true;
    if (!Array.isArray(wanted)) return false;
    return value !== '' && wanted.some((item) => item.toLowerCase() === value.toLowerCase());
  };
  if (!holds('device', visitor.device) || !holds('os', visitor.os)) return false;
  if (!holds('country', visitor.country.trim()) || !holds('language', visitor.language.trim())) return false;
  const query = rule.if.query;
  if (query !== undefined && !Array.isArray(query)) {
    const given = new URLSearchParams(visitor.query.trim().replace(/^\?/, ''));
    for (const [name, values] of Object.entries(query)) {
      if (!given.getAll(name).some((value) => values.includes(value))) return false;
    }
  }
  return Object.keys(rule.if).length > 0;
}

/**
 * Where the visitor goes: the first matching rule's target (and its number, from 1), else
 * the link's own target (rule 0).
 * @param {RuleInput[]} rules
 * @param {Visitor} visitor
 * @param {string} pointsTo
 */
export function targetFor(rules, visitor, pointsTo) {
  const index = rules.findIndex((rule) => matches(rule, visitor));
  const rule = rules[index];
  return rule === undefined ? { rule: 0, to: pointsTo } : { rule: index + 1, to: rule.to };
}

/**
 * The preview's sentence: "A visitor on a mobile device with iOS in DE speaking de goes to …".
 * @param {Visitor} visitor
 * @param {{ rule: number, to: string }} target
 */
export function previewText(visitor, target) {
  /** @type {string[]} */
  const parts = [];
  if (visitor.device !== '') parts.push(`on a ${(VALUE_NAMES[visitor.device] ?? visitor.device).toLowerCase()} device`);
  if (visitor.os !== '') parts.push(`with ${VALUE_NAMES[visitor.os] ?? visitor.os}`);
  if (visitor.country.trim() !== '') parts.push(`in ${visitor.country.trim().toUpperCase()}`);
  if (visitor.language.trim() !== '') parts.push(`speaking ${visitor.language.trim().toLowerCase()}`);
  const query = visitor.query.trim().replace(/^\?/, '');
  if (query !== '') parts.push(`asking ?${query}`);
  const who = parts.length === 0 ? 'A visitor' : `A visitor ${parts.join(' ')}`;
  const where = target.to === '' ? '(no address yet)' : target.to;
  return `${who} goes to ${where}: ${target.rule === 0 ? 'no rule matches, so the target URL' : `rule ${target.rule}`}.`;
}
