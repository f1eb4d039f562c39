/**
 * The command-line options of a link's domain and routing (CONTRACT §8.1–8.3), shared by
 * `shorten` (one link or a file of them) and `edit`: `--domain`, `--forward-query`, `--rule` /
 * `--rules`, and the password, which is better read from a file or standard input than taken
 * from the command line, where any user of the machine can see it in the process list.
 */
import { readFileSync } from 'node:fs';
import type { RedirectRule } from '../../packages/client/src/index.ts';
import { CliFailure, UsageError, type Command } from './command.ts';

export const DOMAIN_OPTION = { domain: { type: 'string' } } as const;

export const ROUTING_OPTIONS = {
  ...DOMAIN_OPTION,
  'forward-query': { type: 'boolean' },
  'no-forward-query': { type: 'boolean' },
  rule: { type: 'string', multiple: true },
  rules: { type: 'string' },
  password: { type: 'string' },
  'password-file': { type: 'string' },
} as const;

/** Edit only: what removes a link's password or rules. */
export const CLEARING_OPTIONS = { 'no-password': { type: 'boolean' }, 'no-rules': { type: 'boolean' } } as const;

export const DOMAIN_HELP = `  --domain HOST       the link's domain: a host the operator registered (GET /v1/domains lists
                      them); omitted, the default domain (BASE_URL's)`;

export const ROUTING_HELP = `  --forward-query     a redirect appends the visitor's query string to the target's
  --no-forward-query  it does not (the default: the server's FORWARD_QUERY, itself off)
  --rule JSON         a redirect rule, {"if": {CONDITIONS}, "to": "URL"}; repeat it for more
                      (at most 10, tried in order, the first that matches sends the visit).
                      Conditions, all of which must hold: device (desktop, mobile, tablet), os
                      (android, ios, windows, macos, linux), country (DE, US, …), language
                      (de, en, …), each one value or a list; query ({"NAME": "VALUE"}).
                      Example: --rule '{"if":{"os":"ios"},"to":"https://apps.apple.com/app/x"}'
  --rules JSON        all the rules at once, as one JSON array (instead of --rule)
  --password-file PATH  protect the link with the password in PATH (its first line; - reads
                      standard input): visitors must give it (8-200 characters). It is
                      stored only as a hash and never shown again
  --password PW       the same, from the command line: other users of the machine can see it
                      in the process list and your shell may keep it in its history; prefer
                      --password-file`;

export interface RoutingValues {
  readonly domain?: string | undefined;
  readonly 'forward-query'?: boolean | undefined;
  readonly 'no-forward-query'?: boolean | undefined;
  readonly rule?: string[] | undefined;
  readonly rules?: string | undefined;
  readonly password?: string | undefined;
  readonly 'password-file'?: string | undefined;
  readonly 'no-password'?: boolean | undefined;
  readonly 'no-rules'?: boolean | undefined;
}

/** What the options ask for; `undefined` leaves a field as it is (edit) or to the server (create); null clears it. */
export interface Routing {
  readonly domain?: string;
  readonly forwardQuery?: boolean;
  readonly rules?: RedirectRule[] | null;
  readonly password?: string | null;
}

/** Reads the routing options; `editing` allows the ones that clear (an empty value, --no-…). */
export function routingOf(command: Command, values: RoutingValues, editing: boolean, readStdin: () => string = () => readFileSync(0, 'utf8')): Routing {
  const { domain, rule, rules, password } = values;
  const passwordFile = values['password-file'];
  if (values['forward-query'] === true && values['no-forward-query'] === true) {
    throw new UsageError(command.name, '--forward-query and --no-forward-query exclude each other');
  }
  const forwardQuery = values['forward-query'] === true ? true : values['no-forward-query'] === true ? false : undefined;

  const ruleSources = [rule !== undefined, rules !== undefined, values['no-rules'] === true].filter(Boolean).length;
  if (ruleSources > 1) throw new UsageError(command.name, '--rule, --rules and --no-rules exclude each other');
  let parsedRules: RedirectRule[] | null | undefined;
  if (rule !== undefined) {
    parsedRules = rule.map((text, i) => {
      const value = jsonOf(command, `--rule ${i + 1}`, text);
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw new UsageError(command.name, `--rule ${i + 1} must be one rule, a JSON object like {"if": {"device": "mobile"}, "to": "https://…"}`);
      }
      return value as RedirectRule;
    });
  } else if (rules !== undefined) {
    if (rules.trim() === '') {
      if (!editing) throw new UsageError(command.name, '--rules is empty (a new link has no rules unless given some)');
      parsedRules = null;
    } else {
      const value = jsonOf(command, '--rules', rules);
      if (!Array.isArray(value)) throw new UsageError(command.name, '--rules must be a JSON array of rules (for one rule, --rule)');
      parsedRules = value.length === 0 && editing ? null : (value as RedirectRule[]);
    }
  } else if (values['no-rules'] === true) {
    parsedRules = null;
  }

  const passwordSources = [password !== undefined, passwordFile !== undefined, values['no-password'] === true].filter(Boolean).length;
  if (passwordSources > 1) throw new UsageError(command.name, '--password, --password-file and --no-password exclude each other');
  let parsedPassword: string | null | undefined;
  if (password !== undefined) {
    parsedPassword = password;
  } else if (passwordFile !== undefined) {
    parsedPassword = firstLine(passwordFile === '-' ? readStdin() : readPasswordFile(passwordFile));
    if (parsedPassword === '') throw new CliFailure(`${passwordFile === '-' ? 'standard input' : passwordFile} holds no password`);
  } else if (values['no-password'] === true) {
    parsedPassword = null;
  }
  if (parsedPassword === '') {
    if (!editing) throw new UsageError(command.name, '--password is empty');
    parsedPassword = null;
  }

  return {
    ...(domain === undefined ? {} : { domain }),
    ...(forwardQuery === undefined ? {} : { forwardQuery }),
    ...(parsedRules === undefined ? {} : { rules: parsedRules }),
    ...(parsedPassword === undefined ? {} : { password: parsedPassword }),
  };
}

function jsonOf(command: Command, what: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(command.name, `${what} is not JSON (${(error as Error).message})`);
  }
}

function readPasswordFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new CliFailure(`cannot read the password file ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** The first line, without its line break: `echo secret > file` and `printf secret` read alike. */
function firstLine(text: string): string {
  return text.replace(/^\ufeff/, '').split(/\r?\n/, 1)[0] ?? '';
}
