/**
 * Turns what a request tells about its client into the classes statistics keep (CONTRACT
 * §7.4): bot or human (`isbot`; no User-Agent is a bot), browser, operating system and device
 * class (`ua-parser-js` 1.x, MIT), referrer host, and country (an offline MMDB database read
 * with `mmdb-lib`). The address and the User-Agent string are used here and forgotten.
 *
 * Parsing a User-Agent costs tens of microseconds and a country lookup a few; the same
 * clients come back, so each input is remembered in a bounded LRU and the hot path usually
 * pays three Map hits.
 */
import { isbot } from 'isbot';
import { Reader, type Response } from 'mmdb-lib';
import UAParser from 'ua-parser-js';
import { createLru } from './lru.ts';
import { DeviceClass, DIRECT, UNKNOWN_COUNTRY, type Visit, type VisitClasses } from './visit.ts';

/** What the classifier reads from a request. */
export interface VisitSource {
  /** The `User-Agent` header, if any. */
  readonly userAgent: string | undefined;
  /** The `Referer` header, if any. */
  readonly referer: string | undefined;
  /** The client's address as the TRUST_PROXY rules give it. */
  readonly address: string;
}

export interface VisitClassifier {
  /** The classes of a visit from `source`, at hour `hour` (hours since the epoch, UTC). */
  classify(source: VisitSource, hour: number): Visit;
}

export interface ClassifierOptions {
  /** An MMDB database whose records carry `country_code`; without one every country is ZZ. */
  readonly countryDatabase?: Buffer | undefined;
  /** Entries per cache (User-Agents, referrers, addresses); 10,000 when omitted. */
  readonly cacheSize?: number;
}

// Longer User-Agents are legitimate but rare; beyond this they are classified by their start
// (the parser itself reads no further than 500 characters) and a 10 KB header never enters a
// cache as a 10 KB key.
const MAX_USER_AGENT = 512;
const MAX_NAME = 64;
const MAX_HOST = 253;
/** Referrer value of a `Referer` that is not a URL with a host. */
export const INVALID_REFERRER = '(invalid)';

interface AgentClasses {
  readonly bot: boolean;
  readonly browser: string;
  readonly os: string;
  readonly device: DeviceClass;
}

const DESKTOP_SYSTEMS = new Set([
  'windows', 'mac os', 'macos', 'linux', 'ubuntu', 'debian', 'fedora', 'chromium os', 'freebsd', 'openbsd',
  'netbsd', 'mint', 'arch', 'gentoo', 'suse', 'red hat', 'centos', 'solaris',
]);

/** A library's name for something, made safe to store: printable, trimmed, bounded. */
function cleanName(name: string | undefined): string {
  if (name === undefined) return 'Other';
  // eslint-disable-next-line no-control-regex
  const clean = name.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim().slice(0, MAX_NAME);
  return clean === '' ? 'Other' : clean;
}

/** Bot or human, browser, OS and device class of a User-Agent (empty: a bot). */
export function classifyUserAgent(userAgent: string): AgentClasses {
  if (userAgent.trim() === '') return { bot: true, browser: 'Other', os: 'Other', device: DeviceClass.Bot };
  const parsed = new UAParser(userAgent).getResult();
  const bot = isbot(userAgent);
  const browser = cleanName(parsed.browser.name);
  const os = cleanName(parsed.os.name);
  let device: DeviceClass;
  if (bot) device = DeviceClass.Bot;
  else if (parsed.device.type === 'mobile') device = DeviceClass.Mobile;
  else if (parsed.device.type === 'tablet') device = DeviceClass.Tablet;
  else if (parsed.device.type !== undefined) device = DeviceClass.Other; // TV, console, wearable, embedded
  else if (DESKTOP_SYSTEMS.has(os.toLowerCase())) device = DeviceClass.Desktop;
  else device = DeviceClass.Other;
  return { bot, browser, os, device };
}

/** The host a `Referer` names: `(direct)` without one, `(invalid)` when it is no URL with a host. */
export function referrerHost(referer: string | undefined): string {
  if (referer === undefined || referer.trim() === '') return DIRECT;
  let host: string;
  try {
    host = new URL(referer.trim()).hostname;
  } catch {
    return INVALID_REFERRER;
  }
  if (host.startsWith('[') && host.endsWith(']')) return host;
  host = host.replace(/\.$/, '').toLowerCase();
  // A non-special scheme keeps characters the WHATWG parser would refuse in a real host.
  // eslint-disable-next-line no-control-regex
  if (host === '' || host.length > MAX_HOST || /[\u0000-\u0020\u007f-\u009f%]/.test(host)) return INVALID_REFERRER;
  return host;
}

/** What the country databases hold per network (not one of mmdb-lib's MaxMind shapes). */
type CountryRecord = { readonly country_code?: unknown } | null;

export function createVisitClassifier({ countryDatabase, cacheSize = 10_000 }: ClassifierOptions = {}): VisitClassifier {
  const agents = createLru<string, AgentClasses>(cacheSize);
  const referrers = createLru<string, string>(cacheSize);
  const countries = createLru<string, string>(cacheSize);
  const reader = countryDatabase === undefined ? undefined : new Reader<Response>(countryDatabase);

  function agentOf(raw: string | undefined): AgentClasses {
    const userAgent = (raw ?? '').slice(0, MAX_USER_AGENT);
    let classes = agents.get(userAgent);
    if (classes === undefined) {
      classes = classifyUserAgent(userAgent);
      agents.set(userAgent, classes);
    }
    return classes;
  }

  function referrerOf(referer: string | undefined): string {
    if (referer === undefined) return DIRECT;
    if (referer.length > 2048) return referrerHost(referer);
    let host = referrers.get(referer);
    if (host === undefined) {
      host = referrerHost(referer);
      referrers.set(referer, host);
    }
    return host;
  }

  function countryOf(address: string): string {
    if (reader === undefined) return UNKNOWN_COUNTRY;
    let country = countries.get(address);
    if (country === undefined) {
      country = lookUpCountry(reader, address);
      countries.set(address, country);
    }
    return country;
  }

  return {
    classify(source, hour) {
      const agent = agentOf(source.userAgent);
      const classes: VisitClasses = {
        bot: agent.bot,
        referrer: referrerOf(source.referer),
        country: countryOf(source.address),
        browser: agent.browser,
        os: agent.os,
        device: agent.device,
      };
      return {
        ...classes,
        hour,
        key: `${hour}\n${classes.bot ? 1 : 0}\n${classes.referrer}\n${classes.country}\n${classes.browser}\n${classes.os}\n${classes.device}`,
      };
    },
  };
}

function lookUpCountry(reader: Reader<Response>, raw: string): string {
  // A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d, which the database files under IPv4.
  const address = raw.startsWith('::ffff:') && raw.includes('.') ? raw.slice(7) : raw;
  try {
    const code = (reader.get(address) as CountryRecord)?.country_code;
    return typeof code === 'string' && /^[A-Z]{2}$/.test(code) ? code : UNKNOWN_COUNTRY;
  } catch {
    return UNKNOWN_COUNTRY; // not an address (a Unix socket, a test's made-up peer)
  }
}
