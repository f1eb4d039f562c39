/**
 * Redirect rules (CONTRACT §8.2): up to 10 ordered `{"if": {…}, "to": "<url>"}` per link; the
 * first rule whose conditions all hold gives the redirect's target, none → `PointsTo`.
 *
 * - `parseRules` turns the `rules` parameter (JSON text, or the value a JSON body already
 *   parsed) into the stored form, or throws an invalid-parameter error naming the problem.
 * - `rulesJson` / `rulesFromJson` write and read the stored text; reading is cached by text,
 *   since it runs on every redirect of a link with rules.
 * - `ruleTarget` picks the target for one visit from facts statistics already computed
 *   (device class, OS name, country) plus the `Accept-Language` header and the raw query,
 *   which are only looked at when a rule asks about them.
 */
import { DomainError, ErrorCode, invalid } from '../errors.ts';
import { createLru } from '../stats/lru.ts';

/**
 * The conditions of a rule, normalised: every value is a list (any member matches), and all
 * present conditions must hold. `device` and `os` are lower case from DEVICES and OS_FAMILIES;
 * `country` upper-case ISO 3166 alpha-2; `language` lower-case primary subtags; `query`
 * parameter names (decoded) → accepted values (decoded).
 */
export interface RuleConditions {
  readonly device?: readonly string[];
  readonly os?: readonly string[];
  readonly country?: readonly string[];
  readonly language?: readonly string[];
  readonly query?: Readonly<Record<string, readonly string[]>>;
}

/** One stored rule: its conditions and the target (as the target check returned it). */
export interface LinkRule {
  readonly if: RuleConditions;
  readonly to: string;
}

/** What `ruleTarget` needs to know of one visit. */
export interface VisitorFacts {
  /** The device class statistics gave the visit (src/stats/visit.ts DeviceClass). */
  readonly device: string;
  /** The OS name statistics gave the visit (ua-parser-js's: 'iOS', 'Mac OS', 'Ubuntu', …). */
  readonly os: string;
  /** ISO 3166 alpha-2, or 'ZZ' when unknown. */
  readonly country: string;
  /** The request's `Accept-Language` header, if any. */
  readonly acceptLanguage: string | undefined;
  /** The visit's raw query string, without the leading '?' ('' when none). */
  readonly query: string;
}

export const MAX_RULES = 10;
/** Values one condition may list: enough for every country of a continent, bounded all the same. */
export const MAX_CONDITION_VALUES = 100;
/** Parameters one `query` condition may name. */
export const MAX_QUERY_NAMES = 20;
/** Code units of a query parameter name or value in a condition. */
export const MAX_QUERY_TEXT = 500;

export const DEVICES = ['desktop', 'mobile', 'tablet'] as const;
export const OS_FAMILIES = ['android', 'ios', 'windows', 'macos', 'linux'] as const;
export type OsFamily = (typeof OS_FAMILIES)[number];
const CONDITIONS = ['device', 'os', 'country', 'language', 'query'] as const;
type ConditionName = (typeof CONDITIONS)[number];

const COUNTRY = /^[A-Za-z]{2}$/;
const LANGUAGE = /^[A-Za-z]{2,8}$/;
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const RULE_SHAPE = '{"if": {…}, "to": "<url>"}';

function quoted(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A condition's value as given: one string or a non-empty list of strings; answered as a list. */
function stringList(value: unknown, where: string): string[] {
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0 || !list.every((item) => typeof item === 'string')) {
    throw invalid(`${where} must be a string or a non-empty list of strings`);
  }
  if (list.length > MAX_CONDITION_VALUES) throw invalid(`${where} may list at most ${MAX_CONDITION_VALUES} values`);
  return list as string[];
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function parseDevice(value: unknown, where: string): string[] {
  return unique(stringList(value, `${where}: "device"`).map((item) => {
    const device = item.toLowerCase();
    if (!(DEVICES as readonly string[]).includes(device)) {
      throw invalid(`${where}: unknown device ${quoted(item)} (known: ${DEVICES.join(', ')})`);
    }
    return device;
  }));
}

function parseOs(value: unknown, where: string): string[] {
  return unique(stringList(value, `${where}: "os"`).map((item) => {
    const os = item.toLowerCase();
    if (!(OS_FAMILIES as readonly string[]).includes(os)) {
      throw invalid(`${where}: unknown os ${quoted(item)} (known: ${OS_FAMILIES.join(', ')})`);
    }
    return os;
  }));
}

function parseCountry(value: unknown, where: string): string[] {
  return unique(stringList(value, `${where}: "country"`).map((item) => {
    if (!COUNTRY.test(item)) throw invalid(`${where}: country ${quoted(item)} is not an ISO 3166 alpha-2 code like "DE"`);
    return item.toUpperCase();
  }));
}

function parseLanguage(value: unknown, where: string): string[] {
  return unique(stringList(value, `${where}: "language"`).map((item) => {
    if (!LANGUAGE.test(item)) {
      throw invalid(`${where}: language ${quoted(item)} is not a primary language subtag (2 to 8 letters like "en", no region)`);
    }
    return item.toLowerCase();
  }));
}

function checkQueryText(text: string, what: string, where: string): void {
  if (text.length > MAX_QUERY_TEXT) throw invalid(`${where}: a parameter ${what} must be at most ${MAX_QUERY_TEXT} characters long`);
  if (CONTROL.test(text) || !text.isWellFormed()) {
    throw invalid(`${where}: a parameter ${what} must be well-formed text without control characters`);
  }
}

function parseQueryCondition(value: unknown, where: string): Record<string, string[]> {
  const shape = `${where} must be an object of parameter name → value or list of values`;
  if (!isObject(value)) throw invalid(shape);
  const names = Object.keys(value);
  if (names.length === 0) throw invalid(`${where} must name at least one parameter`);
  if (names.length > MAX_QUERY_NAMES) throw invalid(`${where} may name at most ${MAX_QUERY_NAMES} parameters`);
  // A null prototype: a parameter may well be called "__proto__" or "constructor".
  const query = Object.create(null) as Record<string, string[]>;
  for (const name of names) {
    if (name === '') throw invalid(`${where}: a parameter name must not be empty`);
    checkQueryText(name, 'name', where);
    const values = unique(stringList(value[name], `${where} ${quoted(name)}`));
    for (const item of values) checkQueryText(item, 'value', where);
    query[name] = values;
  }
  return query;
}

function parseConditions(value: unknown, where: string): RuleConditions {
  if (value === undefined) throw invalid(`${where}: "if" is missing`);
  if (!isObject(value)) throw invalid(`${where}: "if" must be an object of conditions`);
  const given = Object.keys(value);
  if (given.length === 0) throw invalid(`${where}: "if" must hold at least one condition`);
  for (const name of given) {
    if (!(CONDITIONS as readonly string[]).includes(name)) {
      throw invalid(`${where}: unknown condition ${quoted(name)} (known: ${CONDITIONS.join(', ')})`);
    }
    // Only a value built in JavaScript can hold undefined; JSON has none.
    if (value[name] === undefined) throw invalid(`${where}: condition ${quoted(name)} has no value`);
  }
  // Built in one order whatever the input's, so equal rules store equal text.
  const conditions: { -readonly [K in ConditionName]?: RuleConditions[K] } = {};
  if (value.device !== undefined) conditions.device = parseDevice(value.device, where);
  if (value.os !== undefined) conditions.os = parseOs(value.os, where);
  if (value.country !== undefined) conditions.country = parseCountry(value.country, where);
  if (value.language !== undefined) conditions.language = parseLanguage(value.language, where);
  if (value.query !== undefined) conditions.query = parseQueryCondition(value.query, `${where}: "query"`);
  return conditions;
}

function parseTarget(value: unknown, where: string, checkTarget: (url: string) => string): string {
  if (typeof value !== 'string') throw invalid(`${where}: "to" must be the target URL as a string`);
  try {
    return checkTarget(value);
  } catch (error) {
    // The target check speaks of `url`; say which rule's `to` it refused.
    if (error instanceof DomainError && error.code === ErrorCode.InvalidParameter) {
      throw invalid(`${where}: ${error.message.replace(/^url\b/, '"to"')}`);
    }
    throw error;
  }
}

/**
 * The `rules` parameter: JSON text (query string, form body) or the value a JSON body already
 * parsed. Empty text or an empty array means none (it clears them on edit). Otherwise an array
 * of at most MAX_RULES objects with exactly the keys `if` and `to`; each `to` goes through
 * `checkTarget` (the check `url` gets), and its answer is what is stored.
 */
export function parseRules(raw: unknown, checkTarget: (url: string) => string): LinkRule[] {
  let value = raw;
  if (typeof raw === 'string') {
    if (raw.trim() === '') return [];
    try {
      value = JSON.parse(raw);
    } catch {
      throw invalid(`rules must be JSON: a list of rules like ${RULE_SHAPE}`);
    }
  }
  if (!Array.isArray(value)) throw invalid(`rules must be a list of rules like ${RULE_SHAPE}`);
  if (value.length > MAX_RULES) throw invalid(`rules may hold at most ${MAX_RULES} rules`);
  return value.map((rule: unknown, index): LinkRule => {
    const where = `rule ${index + 1}`;
    if (!isObject(rule)) throw invalid(`${where} must be an object like ${RULE_SHAPE}`);
    for (const key of Object.keys(rule)) {
      if (key !== 'if' && key !== 'to') throw invalid(`${where}: unknown key ${quoted(key)} (a rule has "if" and "to")`);
    }
    const conditions = parseConditions(rule.if, where);
    return { if: conditions, to: parseTarget(rule.to, where, checkTarget) };
  });
}

/** The stored text of a link's rules: JSON of the normalised rules, or null for none. */
export function rulesJson(rules: readonly LinkRule[]): string | null {
  return rules.length === 0 ? null : JSON.stringify(rules);
}

const NO_RULES: readonly LinkRule[] = Object.freeze([]);
// Distinct rule sets in use are few next to links; a hot link's text is parsed once.
const parsed = createLru<string, readonly LinkRule[]>(1000);

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

function readList(value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw new Error('stored rules are malformed');
  return value as string[];
}

function readRule(rule: unknown): LinkRule {
  if (!isObject(rule) || !isObject(rule.if) || typeof rule.to !== 'string') throw new Error('stored rules are malformed');
  const { device, os, country, language, query } = rule.if;
  const conditions: { -readonly [K in ConditionName]?: RuleConditions[K] } = {};
  const lists = { device: readList(device), os: readList(os), country: readList(country), language: readList(language) };
  for (const name of ['device', 'os', 'country', 'language'] as const) {
    if (lists[name] !== undefined) conditions[name] = lists[name];
  }
  if (query !== undefined) {
    if (!isObject(query)) throw new Error('stored rules are malformed');
    const names = Object.create(null) as Record<string, readonly string[]>;
    for (const [name, values] of Object.entries(query)) names[name] = readList(values) ?? [];
    conditions.query = names;
  }
  return { if: conditions, to: rule.to };
}

/**
 * A link's rules from their stored text (null: none). The answer is shared between callers
 * and frozen. Text that `rulesJson` could not have written throws: a corrupt row is a fault
 * to see, not a reason to send visitors somewhere unplanned.
 */
export function rulesFromJson(text: string | null): readonly LinkRule[] {
  if (text === null || text === '') return NO_RULES;
  let rules = parsed.get(text);
  if (rules === undefined) {
    const value: unknown = JSON.parse(text);
    if (!Array.isArray(value)) throw new Error('stored rules are malformed');
    rules = deepFreeze(value.map(readRule));
    parsed.set(text, rules);
  }
  return rules;
}

const LINUX_DISTRIBUTIONS = new Set([
  'linux', 'ubuntu', 'kubuntu', 'xubuntu', 'lubuntu', 'debian', 'fedora', 'mint', 'arch', 'gentoo', 'suse', 'opensuse',
  'red hat', 'redhat', 'centos', 'slackware', 'mandriva', 'pclinuxos', 'zenwalk', 'linpus', 'raspbian', 'deepin', 'manjaro',
  'elementary os', 'sabayon', 'linspire', 'mageia', 'vectorlinux',
]);

/**
 * The `os` family of an OS name as statistics give it (ua-parser-js 1.x names), or undefined
 * for a system no family covers. Linux distributions are `linux`; Android (Android-x86 too)
 * is `android`, not `linux`. Left out on purpose: Chromium OS (neither a desktop Linux nor
 * Android to the person who writes a rule: a `.deb` or an app-store link suits it badly),
 * phone systems built on Linux (Ubuntu Touch, Tizen, KaiOS, Sailfish, webOS), HarmonyOS,
 * watchOS, and Windows Phone / Mobile.
 */
export function osFamily(osName: string): OsFamily | undefined {
  const name = osName.toLowerCase();
  switch (name) {
    case 'ios':
    case 'ipados':
      return 'ios';
    case 'android':
    case 'android-x86':
    case 'android x86':
      return 'android';
    case 'windows':
      return 'windows';
    case 'mac os':
    case 'macos':
    case 'mac os x':
      return 'macos';
    default:
      return LINUX_DISTRIBUTIONS.has(name) ? 'linux' : undefined;
  }
}

// Browsers send a handful of languages; anything past these bounds is noise or an attack,
// and the hot path reads no further.
const ACCEPT_LANGUAGE_MAX = 4096;
const ACCEPT_LANGUAGE_ENTRIES = 50;
const LANGUAGE_RANGE = /^([A-Za-z]{1,8})(?:[-_][A-Za-z0-9]{1,8})*$/;
const WEIGHT = /^q=(\d+(?:\.\d*)?|\.\d+)$/i;

/**
 * The primary subtags (lower case, first appearance first, no repeats) of every language an
 * `Accept-Language` header accepts: `q` above 0. `*` and malformed ranges are skipped, and so
 * is an entry whose `q` is no number (its weight is unknown, so it is not taken as accepted);
 * a `q` above 1 counts as 1. Only the first 4096 characters and 50 entries are read.
 */
export function acceptedLanguages(header: string | undefined): string[] {
  if (header === undefined || header === '') return [];
  const languages: string[] = [];
  const entries = header.slice(0, ACCEPT_LANGUAGE_MAX).split(',', ACCEPT_LANGUAGE_ENTRIES);
  for (const entry of entries) {
    const [range = '', ...parameters] = entry.split(';');
    const match = LANGUAGE_RANGE.exec(range.trim());
    if (match === null) continue;
    const primary = match[1]!.toLowerCase();
    if (primary.length < 2) continue; // `i-…` and `x-…` ranges name no language
    let accepted = true;
    for (const parameter of parameters) {
      const text = parameter.trim().replace(/\s*=\s*/, '=');
      if (!/^q=/i.test(text)) continue;
      const weight = WEIGHT.exec(text);
      accepted = weight !== null && Number(weight[1]) > 0;
    }
    if (accepted && !languages.includes(primary)) languages.push(primary);
  }
  return languages;
}

/**
 * The target of the first rule whose conditions all hold for this visit; undefined when none
 * does (the link's `PointsTo` then). Languages and query parameters are worked out only if a
 * rule asks about them, and at most once per visit.
 */
export function ruleTarget(rules: readonly LinkRule[], facts: VisitorFacts): string | undefined {
  let family: OsFamily | undefined | null = null;
  let languages: string[] | undefined;
  let query: URLSearchParams | undefined;
  for (const rule of rules) {
    const { device, os, country, language, query: wanted } = rule.if;
    if (device !== undefined && !device.includes(facts.device)) continue;
    if (os !== undefined) {
      if (family === null) family = osFamily(facts.os);
      if (family === undefined || !os.includes(family)) continue;
    }
    if (country !== undefined && !country.includes(facts.country)) continue;
    if (language !== undefined) {
      languages ??= acceptedLanguages(facts.acceptLanguage);
      if (!languages.some((accepted) => language.includes(accepted))) continue;
    }
    if (wanted !== undefined) {
      query ??= new URLSearchParams(facts.query);
      if (!queryMatches(wanted, query)) continue;
    }
    return rule.to;
  }
  return undefined;
}

/** Every named parameter is present with one of its listed values (any of its occurrences). */
function queryMatches(wanted: Readonly<Record<string, readonly string[]>>, query: URLSearchParams): boolean {
  for (const name in wanted) {
    const values = wanted[name]!;
    if (!query.getAll(name).some((value) => values.includes(value))) return false;
  }
  return true;
}

/**
 * True when some rule asks about the device, OS or country: only then does a redirect need
 * the visit's classes before it answers (a link without such rules answers first, and
 * statistics classify the visit as they always did).
 */
export function usesVisitorClasses(rules: readonly LinkRule[]): boolean {
  return rules.some((rule) => rule.if.device !== undefined || rule.if.os !== undefined || rule.if.country !== undefined);
}
