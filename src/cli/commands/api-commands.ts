/**
 * Commands that talk to a running server through the client library, as any user would.
 */
import { randomBytes } from 'node:crypto';
import { renameSync } from 'node:fs';
import { dirname, join, resolve as resolvePath } from 'node:path';
import {
  ShortlinkClient, type CreateLinkOptions, type LinkChanges, type LinkDetails, type LinkRef, type ListLinksOptions, type Statistics,
  type StatsOptions,
} from '../../../packages/client/src/index.ts';
import { ACCESS_CODE_VARIABLE, readAccessCode, reserveCodeFile } from '../access-code-source.ts';
import { CliFailure, parseCommand, UsageError, wholeNumber, type CliContext, type Command } from '../command.ts';
import type { Account } from '../../http/schemas.ts';
import { CLEARING_OPTIONS, DOMAIN_HELP, DOMAIN_OPTION, ROUTING_HELP, ROUTING_OPTIONS, routingOf } from '../link-options.ts';
import { configOf } from './server-commands.ts';
import { FROM_FILE_HELP, shortenFromFile } from './bulk-shorten.ts';

export const DEFAULT_SERVER = 'http://localhost:8080';
export const SERVER_VARIABLE = 'SHORTLINK_SERVER';

const SERVER_OPTION = { server: { type: 'string' } } as const;
export const CODE_OPTIONS = { server: { type: 'string' }, 'code-file': { type: 'string' } } as const;

/** `--json` on a command whose output is JSON anyway: scripts may pass it to every command. */
export const JSON_ALREADY = { json: { type: 'boolean' } } as const;
export const JSON_ALREADY_HELP = '  --json              accepted, and changes nothing: the output is JSON already';

const CONNECTION_HELP = `
Connection:
  --server URL        the service, default $${SERVER_VARIABLE} or ${DEFAULT_SERVER}`;

export const CODE_HELP = `${CONNECTION_HELP}
  --code-file PATH    read the access code from PATH, a file only you may read (chmod 600);
                      otherwise it comes from $${ACCESS_CODE_VARIABLE}. Never from the command line.`;

function serverOf(command: Command, context: CliContext, flag: string | undefined): string {
  const server = flag ?? (context.env[SERVER_VARIABLE]?.trim() || DEFAULT_SERVER);
  const parsed = URL.parse(server);
  if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new UsageError(command.name, `--server must be an http(s) URL, got ${JSON.stringify(server)}`);
  }
  return server;
}

/** A client whose network failures name the server they could not reach. */
function clientFor(baseUrl: string, accessCode?: string): ShortlinkClient {
  const reach: typeof fetch = async (input, init) => {
    try {
      return await fetch(input, init);
    } catch (error) {
      if (error instanceof TypeError) {
        const cause = error.cause as NodeJS.ErrnoException | Error | undefined;
        const reason = (cause as NodeJS.ErrnoException | undefined)?.code ?? cause?.message ?? error.message;
        throw new CliFailure(`cannot reach the server at ${baseUrl} (${reason})`);
      }
      throw error;
    }
  };
  return new ShortlinkClient({ baseUrl, fetch: reach, ...(accessCode === undefined ? {} : { accessCode }) });
}

export function authenticatedClient(command: Command, context: CliContext, values: { server?: string; 'code-file'?: string }): ShortlinkClient {
  const baseUrl = serverOf(command, context, values.server);
  return clientFor(baseUrl, readAccessCode(context.env, values['code-file']));
}

/** An account made in the database itself, as `new_account` would make it (the code stored as its digest). */
async function createInDatabase(context: CliContext, maxLinks: number | undefined): Promise<Account> {
  const config = configOf(context.env);
  // Loaded on use, as the admin commands do: the database drivers are most of the start-up time.
  const [{ openAdmin }, { createAccountWithCode }] = await Promise.all([
    import('./admin-commands.ts'),
    import('../../accounts/access-code.ts'),
  ]);
  const store = await openAdmin(config, true);
  try {
    const account = await createAccountWithCode(store, { dateCreated: new Date().toISOString(), maxLinks: maxLinks ?? config.defaultMaxLinks });
    return { Uid: account.uid, AccessCode: account.accessCode, DateCreated: account.dateCreated, MaxLinks: account.maxLinks };
  } finally {
    await store.close();
  }
}

export function printJson(context: CliContext, value: unknown): void {
  context.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export const accountCreate: Command = {
  name: 'account create',
  summary: 'create an account and print it with its access code',
  help: `Usage: shortlink account create [--save-code PATH] [--json] [--server URL]
       shortlink account create --database [--max-links N] [--save-code PATH] [--json]

Creates an account and prints it as JSON: Uid, AccessCode, DateCreated, MaxLinks.
The access code is the account's only key and cannot be shown again.

Options:
  --save-code PATH    write the access code to PATH instead, created with mode 0600 (it must
                      not exist yet), and leave it out of the JSON; use it with --code-file PATH
  --database          create it directly in the database named by DATABASE_URL instead of
                      asking a server: how operators make accounts while REGISTRATION=closed
  --max-links N       with --database: its MaxLinks (default: DEFAULT_MAX_LINKS, or 20)
${JSON_ALREADY_HELP}
${CONNECTION_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, {
      command: accountCreate,
      options: { ...SERVER_OPTION, ...JSON_ALREADY, 'save-code': { type: 'string' }, database: { type: 'boolean' }, 'max-links': { type: 'string' } },
      positionals: [],
    });
    if (parsed === undefined) return 0;
    const { database, server } = parsed.values;
    const rawMax = parsed.values['max-links'];
    if (database === true && server !== undefined) throw new UsageError(accountCreate.name, '--database and --server exclude each other');
    if (database !== true && rawMax !== undefined) throw new UsageError(accountCreate.name, '--max-links needs --database');
    const maxLinks = rawMax === undefined ? undefined : wholeNumber(accountCreate, '--max-links', rawMax);
    const create = database === true
      ? () => createInDatabase(context, maxLinks)
      : () => clientFor(serverOf(accountCreate, context, server)).newAccount();
    const savePath = parsed.values['save-code'];
    const slot = savePath === undefined ? undefined : reserveCodeFile(savePath);
    let account;
    try {
      account = await create();
    } catch (error) {
      slot?.abandon();
      throw error;
    }
    slot?.write(account.AccessCode);
    printAccount(context, account, savePath);
    return 0;
  },
};

/**
 * Prints an account that carries a new access code. With a code file, the code is not
 * printed: stdout is often a terminal's scrollback, a log or a CI transcript.
 */
function printAccount(context: CliContext, account: Account, savePath: string | undefined): void {
  if (savePath === undefined) {
    printJson(context, account);
    context.stderr.write('Keep the AccessCode: it is the only key to the account and cannot be shown again.\n');
  } else {
    const { AccessCode: _saved, ...rest } = account;
    printJson(context, rest);
    context.stderr.write(`The access code is saved in ${savePath} (mode 0600), not printed; use --code-file ${savePath}.\n`);
  }
}

export const accountInfo: Command = {
  name: 'account info',
  summary: 'show the account of your access code',
  help: `Usage: shortlink account info [--json] [--code-file PATH] [--server URL]

Prints your account as JSON: Uid, AccessCode, DateCreated, MaxLinks.

Options:
${JSON_ALREADY_HELP}
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, { command: accountInfo, options: { ...CODE_OPTIONS, ...JSON_ALREADY }, positionals: [] });
    if (parsed === undefined) return 0;
    printJson(context, await authenticatedClient(accountInfo, context, parsed.values).getAccount());
    return 0;
  },
};

const LINK_FIELD_OPTIONS = {
  title: { type: 'string' }, tags: { type: 'string' }, expires: { type: 'string' }, 'max-visits': { type: 'string' },
} as const;

const LINK_FIELD_HELP = `  --title TEXT        a title, up to 200 characters
  --tags a,b,c        up to 10 tags, each 1-50 of A-Z a-z 0-9 - _ . (stored lower case)
  --expires TIME      when it stops resolving: RFC 3339 with an offset (2027-01-01T00:00:00Z)
  --max-visits N      how many resolutions it allows in all`;

function tagList(raw: string): string[] {
  return raw.split(',').map((tag) => tag.trim()).filter((tag) => tag !== '');
}

function visitLimit(command: Command, raw: string): number {
  return wholeNumber(command, '--max-visits', raw, 1);
}

/** The details of one of the account's links, found by its shortcode on its domain. */
async function detailsOf(client: ShortlinkClient, shortCode: string, domain: string | undefined): Promise<LinkDetails | undefined> {
  // q matches within shortcodes, targets and titles: every match comes, the exact one is kept.
  const found = await client.listLinks({ q: shortCode, ...(domain === undefined ? {} : { domain }) });
  return found.find((link) => link.ShortCode === shortCode);
}

/** How the CLI names a link: its shortcode, or `host/shortcode` off the default domain. */
export function linkName(shortCode: string, domain: string | null | undefined): string {
  return domain === null || domain === undefined || domain === '' ? shortCode : `${domain}/${shortCode}`;
}

/** The link CODE names with --domain. */
function refOf(code: string, domain: string | undefined): LinkRef {
  return domain === undefined ? code : { shortCode: code, domain };
}

export const shorten: Command = {
  name: 'shorten',
  summary: 'create a short link: shorten URL [--short CODE] [--domain HOST] [--title …] [--rule JSON] [--password-file PATH] …, or many: shorten --from-file PATH',
  help: `Usage: shortlink shorten URL [--short CODE] [--domain HOST] [--title TEXT] [--tags a,b]
                        [--expires TIME] [--max-visits N] [--forward-query] [--rule JSON]...
                        [--password-file PATH] [--json] [--code-file PATH] [--server URL]
       shortlink shorten --from-file PATH [the same options but --short] [--code-file PATH] [--server URL]

Creates a link to URL and prints its short URL (on its domain's origin).

Options:
  --short CODE        the shortcode to use (5-2000 of A-Z a-z 0-9 - . _ ~); generated when omitted
${DOMAIN_HELP}
${LINK_FIELD_HELP}
${ROUTING_HELP}
  --json              print the new link as JSON instead: ShortUrl, then its LinkDetails
${FROM_FILE_HELP}
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, {
      command: shorten,
      options: {
        ...CODE_OPTIONS, ...LINK_FIELD_OPTIONS, ...ROUTING_OPTIONS, short: { type: 'string' }, json: { type: 'boolean' }, 'from-file': { type: 'string' },
      },
      positionals: ['url?'],
    });
    if (parsed === undefined) return 0;
    const { short, title, tags, expires, json } = parsed.values;
    const maxVisits = parsed.values['max-visits'];
    const fromFile = parsed.values['from-file'];
    const url = parsed.positionals[0];
    if (fromFile !== undefined && (url !== undefined || short !== undefined || json === true)) {
      throw new UsageError(shorten.name, '--from-file takes no URL, no --short and no --json');
    }
    if (fromFile === '-' && parsed.values['password-file'] === '-') {
      throw new UsageError(shorten.name, '--from-file - and --password-file - cannot both read standard input');
    }
    if (fromFile === undefined && url === undefined) throw new UsageError(shorten.name, 'missing URL (or --from-file PATH)');
    const routing = routingOf(shorten, parsed.values, false);
    const client = authenticatedClient(shorten, context, parsed.values);
    // With --from-file, every option but --short applies to each link of the file.
    const options: CreateLinkOptions = {
      ...(short === undefined ? {} : { short }),
      ...(title === undefined ? {} : { title }),
      ...(tags === undefined ? {} : { tags: tagList(tags) }),
      ...(expires === undefined ? {} : { expires }),
      ...(maxVisits === undefined ? {} : { maxVisits: visitLimit(shorten, maxVisits) }),
      ...(routing.domain === undefined ? {} : { domain: routing.domain }),
      ...(routing.forwardQuery === undefined ? {} : { forwardQuery: routing.forwardQuery }),
      ...(routing.rules == null ? {} : { rules: routing.rules }),
      ...(routing.password == null ? {} : { password: routing.password }),
    };
    if (fromFile !== undefined) return shortenFromFile(client, fromFile, context, options);
    const created = await client.shorten(url!, options);
    if (json === true) {
      const details = await detailsOf(client, created.shortCode, routing.domain);
      printJson(context, { ShortUrl: created.shortUrl, ...(details ?? { ShortCode: created.shortCode }) });
    } else {
      context.stdout.write(`${created.shortUrl}\n`);
    }
    return 0;
  },
};

export const edit: Command = {
  name: 'edit',
  summary: 'change one of your links: edit CODE [--domain HOST] [--url URL] [--title …] [--rule JSON] [--no-password] …',
  help: `Usage: shortlink edit CODE [--domain HOST] [--url URL] [--title TEXT] [--tags a,b]
                     [--expires TIME] [--max-visits N] [--forward-query | --no-forward-query]
                     [--rule JSON... | --rules JSON | --no-rules]
                     [--password-file PATH | --no-password] [--json] [--code-file PATH] [--server URL]

Changes your link CODE (PATCH /v1/link) and prints it as it then stands. Give at least one
option; the others stay as they are. An empty value clears a field: --title "" removes the
title, --tags "" every tag, --expires "" the expiry, --max-visits "" the limit (a link that
had expired or reached its limit then resolves again). --rule or --rules replaces every rule;
--no-rules (or --rules "") removes them, --no-password the password. The shortcode, its
domain and its accesses never change.

Options:
${DOMAIN_HELP.replace("the link's domain", "the domain CODE is on")}
  --url URL           a new target
${LINK_FIELD_HELP}
${ROUTING_HELP}
  --no-rules          remove every rule
  --no-password       remove the password: the link opens to anyone again
  --json              print the API's LinkDetails JSON instead
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, {
      command: edit,
      options: { ...CODE_OPTIONS, ...LINK_FIELD_OPTIONS, ...ROUTING_OPTIONS, ...CLEARING_OPTIONS, url: { type: 'string' }, json: { type: 'boolean' } },
      positionals: ['code'],
    });
    if (parsed === undefined) return 0;
    const { url, title, tags, expires, json } = parsed.values;
    const maxVisits = parsed.values['max-visits'];
    const routing = routingOf(edit, parsed.values, true);
    const changes: LinkChanges = {
      ...(url === undefined ? {} : { url }),
      ...(title === undefined ? {} : { title: title === '' ? null : title }),
      ...(tags === undefined ? {} : { tags: tags.trim() === '' ? null : tagList(tags) }),
      ...(expires === undefined ? {} : { expires: expires === '' ? null : expires }),
      ...(maxVisits === undefined ? {} : { maxVisits: maxVisits === '' ? null : visitLimit(edit, maxVisits) }),
      ...(routing.forwardQuery === undefined ? {} : { forwardQuery: routing.forwardQuery }),
      ...(routing.rules === undefined ? {} : { rules: routing.rules }),
      ...(routing.password === undefined ? {} : { password: routing.password }),
    };
    if (Object.keys(changes).length === 0) {
      throw new UsageError(
        edit.name,
        'nothing to change: give --url, --title, --tags, --expires, --max-visits, --forward-query, --rule, --rules, --password-file or a --no-… option',
      );
    }
    const client = authenticatedClient(edit, context, parsed.values);
    const details = await client.updateLink(refOf(parsed.positionals[0]!, routing.domain), changes);
    if (json === true) printJson(context, details);
    else context.stdout.write(describeLink(details));
    return 0;
  },
};

/** A link's details, one field a line, for a terminal. */
export function describeLink(link: LinkDetails): string {
  const rows: [string, string][] = [
    ['ShortCode', link.ShortCode],
    ['Domain', link.Domain ?? '- (the default domain)'],
    ['PointsTo', link.PointsTo],
    ['Accesses', String(link.Accesses)],
    ['DateCreated', link.DateCreated],
    ['Title', link.Title ?? '-'],
    ['Tags', link.Tags.length === 0 ? '-' : link.Tags.join(',')],
    ['ExpiresAt', link.ExpiresAt ?? '-'],
    ['MaxVisits', link.MaxVisits === null ? '-' : String(link.MaxVisits)],
    ['ForwardQuery', link.ForwardQuery ? 'yes' : 'no'],
    ['Protected', link.Protected ? 'yes (a password)' : 'no'],
    ['Rules', link.Rules.length === 0 ? '-' : link.Rules.map((rule, i) => `${i + 1}. ${describeRule(rule)}`).join(`\n${' '.repeat(14)}`)],
  ];
  return rows.map(([name, value]) => `${name.padEnd(14)}${value}\n`).join('');
}

/** One rule on one line: `device=mobile,tablet os=ios query:ref=a → https://…`. */
export function describeRule(rule: LinkDetails['Rules'][number]): string {
  const conditions: string[] = [];
  for (const [name, value] of Object.entries(rule.If)) {
    if (name === 'query') {
      for (const [parameter, values] of Object.entries(value as Record<string, string[]>)) conditions.push(`query:${parameter}=${values.join(',')}`);
    } else {
      conditions.push(`${name}=${(value as string[]).join(',')}`);
    }
  }
  return `${conditions.join(' ')} → ${rule.To}`;
}

export const links: Command = {
  name: 'links',
  summary: 'list your links: links [--domain HOST] [--search TEXT] [--tag a,b] [--limit N]',
  help: `Usage: shortlink links [--domain HOST] [--search TEXT] [--tag a,b] [--limit N] [--json | --csv]
                      [--code-file PATH] [--server URL]

Lists your links, oldest first: shortcode (host/shortcode off the default domain), accesses
and target, one per line (all of them, unless --limit is given). A P after the accesses marks
a protected link, an R one with redirect rules, a Q one that forwards the query.

Options:
  --domain HOST       only the links of this domain (its host; BASE_URL's for the default one)
  --search TEXT       only links whose shortcode, target or title holds TEXT (any case)
  --tag a,b           only links carrying every one of these tags
  --limit N           at most N links (1-1000)
  --order ORDER       oldest (the default), newest, or visits (most first, ties newest first)
  --json              print the API's JSON array (LinkDetails) instead
  --csv               print the API's CSV instead (GET /v1/links?format=csv): every field of
                      every link, the columns of "shortlink export"; "shortlink import" on a
                      server's database reads it back whole
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, {
      command: links,
      options: {
        ...CODE_OPTIONS, ...DOMAIN_OPTION, search: { type: 'string' }, tag: { type: 'string' }, limit: { type: 'string' }, order: { type: 'string' },
        json: { type: 'boolean' }, csv: { type: 'boolean' },
      },
      positionals: [],
    });
    if (parsed === undefined) return 0;
    const { domain, search, tag, limit, order, json, csv } = parsed.values;
    if (order !== undefined && order !== 'oldest' && order !== 'newest' && order !== 'visits') {
      throw new UsageError(links.name, '--order must be oldest, newest or visits');
    }
    if (json === true && csv === true) throw new UsageError(links.name, '--json and --csv exclude each other');
    // Without --limit the service answers every matching link at once.
    const options: ListLinksOptions = {
      ...(domain === undefined ? {} : { domain }),
      ...(search === undefined ? {} : { q: search }),
      ...(tag === undefined ? {} : { tags: tagList(tag) }),
      ...(limit === undefined ? {} : { limit: wholeNumber(links, '--limit', limit, 1) }),
      ...(order === undefined ? {} : { order }),
    };
    const client = authenticatedClient(links, context, parsed.values);
    if (csv === true) {
      context.stdout.write(await client.listLinksCsv(options));
      return 0;
    }
    const list = await client.listLinks(options);
    if (json === true) printJson(context, list);
    else context.stdout.write(table(list));
    return 0;
  },
};

function table(list: readonly LinkDetails[]): string {
  if (list.length === 0) return 'No links.\n';
  const names = list.map((link) => linkName(link.ShortCode, link.Domain));
  const marks = list.map((link) => `${link.Protected ? 'P' : ''}${link.Rules.length > 0 ? 'R' : ''}${link.ForwardQuery ? 'Q' : ''}`);
  const codeWidth = Math.max('SHORTCODE'.length, ...names.map((name) => name.length));
  const countWidth = Math.max('ACCESSES'.length, ...list.map((link) => String(link.Accesses).length));
  const markWidth = Math.max(0, ...marks.map((mark) => mark.length));
  const markColumn = (mark: string) => (markWidth === 0 ? '' : ` ${mark.padEnd(markWidth)}`);
  const lines = [`${'SHORTCODE'.padEnd(codeWidth)}  ${'ACCESSES'.padStart(countWidth)}${markColumn('')}  TARGET`];
  list.forEach((link, i) => {
    lines.push(`${names[i]!.padEnd(codeWidth)}  ${String(link.Accesses).padStart(countWidth)}${markColumn(marks[i]!)}  ${link.PointsTo}`);
  });
  return `${lines.join('\n')}\n`;
}

export const resolve: Command = {
  name: 'resolve',
  summary: 'look a link up: resolve CODE [--domain HOST] [--password-file PATH] (counts one access)',
  help: `Usage: shortlink resolve CODE [--domain HOST] [--password-file PATH] [--json] [--server URL]

Prints the link CODE as JSON: ShortCode, PointsTo, CreatedBy, Accesses. Like any resolution
this counts one access, and the answer includes it. Needs no access code; a protected link
needs its password (sent in the request's body, never in its URL).

Options:
${DOMAIN_HELP.replace("the link's domain", 'the domain CODE is on')}
  --password-file PATH  the password of a protected link, the first line of PATH (- reads
                      standard input)
  --password PW       the same from the command line, where other users can see it
${JSON_ALREADY_HELP}
${CONNECTION_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, {
      command: resolve,
      options: { ...SERVER_OPTION, ...JSON_ALREADY, ...DOMAIN_OPTION, password: { type: 'string' }, 'password-file': { type: 'string' } },
      positionals: ['code'],
    });
    if (parsed === undefined) return 0;
    const { domain, password } = routingOf(resolve, parsed.values, false);
    const client = clientFor(serverOf(resolve, context, parsed.values.server));
    printJson(context, await client.resolve(refOf(parsed.positionals[0]!, domain), password == null ? {} : { password }));
    return 0;
  },
};

export const deleteLink: Command = {
  name: 'delete',
  summary: 'delete one of your links: delete CODE [--domain HOST]',
  help: `Usage: shortlink delete CODE [--domain HOST] [--json] [--code-file PATH] [--server URL]

Deletes your link CODE. Its shortcode becomes free again (on its domain), and its slot in
your cap too.

Options:
${DOMAIN_HELP.replace("the link's domain", 'the domain CODE is on')}
  --json              print {"Deleted": CODE} instead ({"Deleted": CODE, "Domain": HOST} with --domain)
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, {
      command: deleteLink, options: { ...CODE_OPTIONS, ...DOMAIN_OPTION, json: { type: 'boolean' } }, positionals: ['code'],
    });
    if (parsed === undefined) return 0;
    const code = parsed.positionals[0]!;
    const { domain } = parsed.values;
    await authenticatedClient(deleteLink, context, parsed.values).deleteLink(refOf(code, domain));
    if (parsed.values.json === true) printJson(context, domain === undefined ? { Deleted: code } : { Deleted: code, Domain: domain });
    else context.stdout.write(`Deleted ${linkName(code, domain)}\n`);
    return 0;
  },
};

export const accountRotate: Command = {
  name: 'account rotate',
  summary: 'give your account a new access code (the old one stops working)',
  help: `Usage: shortlink account rotate [--save-code PATH] [--json] [--code-file PATH] [--server URL]

Gives your account a new access code (POST /v1/rotate_access_code) and prints the account as
JSON with it: Uid, AccessCode, DateCreated, MaxLinks. The old code stops working on every
instance within a second.

Options:
  --save-code PATH    write the new code to PATH (mode 0600) instead of printing it. PATH may
                      be the --code-file in use: it is then replaced whole (written beside it
                      and renamed), never left half-written; any other PATH must not exist yet
${JSON_ALREADY_HELP}
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, {
      command: accountRotate, options: { ...CODE_OPTIONS, ...JSON_ALREADY, 'save-code': { type: 'string' } }, positionals: [],
    });
    if (parsed === undefined) return 0;
    const savePath = parsed.values['save-code'];
    const codeFile = parsed.values['code-file'];
    const client = authenticatedClient(accountRotate, context, parsed.values);
    const replacing = savePath !== undefined && codeFile !== undefined && resolvePath(savePath) === resolvePath(codeFile);
    // The new file is made before the code changes, so a path that cannot be written fails
    // while the old code still works.
    const target = replacing ? join(dirname(savePath), `.${randomBytes(6).toString('hex')}.code-partial`) : savePath;
    const slot = target === undefined ? undefined : reserveCodeFile(target);
    let account: Account;
    try {
      account = await client.rotateAccessCode();
    } catch (error) {
      slot?.abandon();
      throw error;
    }
    slot?.write(account.AccessCode);
    if (replacing) {
      try {
        renameSync(target!, savePath);
      } catch (error) {
        throw new CliFailure(`the code changed, but ${savePath} could not be replaced (${(error as NodeJS.ErrnoException).code}); ` +
          `the new code is in ${target}`);
      }
    }
    printAccount(context, account, savePath);
    return 0;
  },
};

export const accountDelete: Command = {
  name: 'account delete',
  summary: 'delete your account and every link it holds (asks for --yes)',
  help: `Usage: shortlink account delete --yes [--json] [--code-file PATH] [--server URL]

Deletes your account and all its links (DELETE /v1/account); their shortcodes become free.
It cannot be undone, so the command asks for --yes.

Options:
  --yes               confirm
  --json              print {"Deleted": UID} instead
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, {
      command: accountDelete, options: { ...CODE_OPTIONS, yes: { type: 'boolean' }, json: { type: 'boolean' } }, positionals: [],
    });
    if (parsed === undefined) return 0;
    if (parsed.values.yes !== true) {
      throw new UsageError(accountDelete.name, 'deleting an account and all its links cannot be undone: add --yes to confirm');
    }
    const client = authenticatedClient(accountDelete, context, parsed.values);
    const { Uid } = await client.getAccount();
    await client.deleteAccount();
    if (parsed.values.json === true) printJson(context, { Deleted: Uid });
    else context.stdout.write(`Deleted account ${Uid} and all its links\n`);
    return 0;
  },
};

export const stats: Command = {
  name: 'stats',
  summary: 'visit statistics: stats [CODE] [--domain HOST] (your whole account without CODE)',
  help: `Usage: shortlink stats [CODE] [--domain HOST] [--from TIME] [--to TIME] [--interval hour|day|month]
                      [--json | --csv] [--code-file PATH] [--server URL]

Shows the visits of your link CODE, or of all your links, over a period: the totals
(humans and bots apart), a small chart of the series, and the top referrers, countries,
browsers, operating systems and devices.

Options:
${DOMAIN_HELP.replace("the link's domain", 'the domain CODE is on')}
  --from TIME         start, RFC 3339 with an offset (2026-11-01T00:00:00Z); default 30 days before --to
  --to TIME           end; default now
  --interval NAME     hour, day (default) or month, in UTC
  --json              print the API's JSON instead
  --csv               print the series as CSV (time,visits,bots)
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, {
      command: stats,
      options: {
        ...CODE_OPTIONS, ...DOMAIN_OPTION, from: { type: 'string' }, to: { type: 'string' }, interval: { type: 'string' },
        json: { type: 'boolean' }, csv: { type: 'boolean' },
      },
      positionals: ['code?'],
    });
    if (parsed === undefined) return 0;
    const { domain, from, to, interval, json, csv } = parsed.values;
    if (json === true && csv === true) throw new UsageError(stats.name, '--json and --csv exclude each other');
    if (interval !== undefined && interval !== 'hour' && interval !== 'day' && interval !== 'month') {
      throw new UsageError(stats.name, `--interval must be hour, day or month, got ${JSON.stringify(interval)}`);
    }
    const short = parsed.positionals[0];
    if (short === undefined && domain !== undefined) throw new UsageError(stats.name, '--domain names the domain of CODE; give CODE too');
    const options: StatsOptions = {
      ...(short === undefined ? {} : { short }), ...(domain === undefined ? {} : { domain }), ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }),
      ...(interval === undefined ? {} : { interval }),
    };
    const client = authenticatedClient(stats, context, parsed.values);
    if (csv === true) context.stdout.write(await client.statsCsv(options));
    else if (json === true) printJson(context, await client.stats(options));
    else context.stdout.write(statsReport(await client.stats(options), domain));
    return 0;
  },
};

export const events: Command = {
  name: 'events',
  summary: 'follow your account\'s events live, one JSON line each',
  help: `Usage: shortlink events [--count N] [--json] [--code-file PATH] [--server URL]

Prints your account's events as they happen on any instance (GET /v1/events): one JSON
line each, {"id", "type", "timestamp", "data"}, for link.created, link.updated,
link.deleted, link.visited (data.visits) and account.rotated; a change's id is the
webhook-id of its webhook deliveries. Runs until interrupted,
until N events have come, or until the server ends the stream (a restart). Events are
not replayed: what happens while nothing listens is not shown.

Options:
  --count N           stop after N events
${JSON_ALREADY_HELP}
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, {
      command: events,
      options: { ...CODE_OPTIONS, ...JSON_ALREADY, count: { type: 'string' } },
      positionals: [],
    });
    if (parsed === undefined) return 0;
    const count = parsed.values.count === undefined ? undefined : wholeNumber(events, '--count', parsed.values.count);
    if (count === 0) return 0;
    const client = authenticatedClient(events, context, parsed.values);
    let seen = 0;
    for await (const event of client.events()) {
      const { id, type, timestamp, data } = event;
      context.stdout.write(`${JSON.stringify({ id, type, timestamp, data })}\n`);
      if (count !== undefined && ++seen >= count) return 0;
    }
    context.stderr.write('shortlink events: the server ended the stream\n');
    return 0;
  },
};

const BARS = ' ▁▂▃▄▅▆▇█';

/** A one-line chart of the series: one block per interval, its height the visits. */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  return values.map((v) => (max === 0 || v === 0 ? BARS[0] : BARS[Math.max(1, Math.round((v / max) * 8))])).join('');
}

/** Visits as a plain-text report for a terminal; `domain` is the link's, when not the default. */
export function statsReport(s: Statistics, domain?: string): string {
  const lines = [
    `${s.ShortCode === null ? 'All links' : linkName(s.ShortCode, domain)}: ${s.Visits} visits (${s.Humans} humans, ${s.Bots} bots)`,
    `${s.From} to ${s.To}, per ${s.Interval}`,
  ];
  // At most 60 columns: longer series are summed into wider columns.
  const width = Math.ceil(s.Series.length / 60) || 1;
  const columns: number[] = [];
  for (let i = 0; i < s.Series.length; i += width) columns.push(s.Series.slice(i, i + width).reduce((sum, p) => sum + p.Visits, 0));
  lines.push(`|${sparkline(columns)}| max ${Math.max(0, ...columns)}${width > 1 ? ` per ${width} ${s.Interval}s` : ''}`, '');
  const top = (title: string, list: Statistics['Referrers']) => {
    lines.push(`${title}:`);
    if (list.length === 0) lines.push('  (none)');
    for (const { Name, Visits } of list.slice(0, 10)) lines.push(`  ${String(Visits).padStart(8)}  ${Name}`);
    if (list.length > 10) lines.push(`  … ${list.length - 10} more (--json shows all)`);
  };
  top('Referrers', s.Referrers);
  top('Countries', s.Countries);
  top('Browsers', s.Browsers);
  top('Operating systems', s.OperatingSystems);
  top('Devices', s.Devices);
  return `${lines.join('\n')}\n`;
}
