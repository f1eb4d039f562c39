/**
 * `shortlink admin …` for account control and moderation, directly on the database (like
 * set-max-links): the same rules as `/v1/admin/…`, through the same admin service, so a
 * host search or a refused cap reads alike from the CLI and the API.
 */
import type { AdminService } from '../../admin/admin-service.ts';
import type { Config } from '../../config.ts';
import { DomainError } from '../../errors.ts';
import { adminAccountBody, linkDetailsBody } from '../../http/presenters.ts';
import type { AdminStore } from '../../store/admin.ts';
import { CliFailure, parseCommand, UsageError, wholeNumber, type CliContext, type Command } from '../command.ts';
import { DATABASE_HELP, openAdmin } from './admin-commands.ts';
import { configOf } from './server-commands.ts';

/**
 * Runs `work` with the admin service over a freshly opened admin store, then closes it. The
 * service keys a `domain` as the server does (an unregistered host is refused), from the
 * domains the database holds.
 */
async function withAdmin<R>(context: CliContext, work: (admin: AdminService, store: AdminStore, config: Config) => Promise<R>): Promise<R> {
  const config = configOf(context.env);
  const [store, { createAdminService }, { createDomainRegistry }, { linkKey }] = await Promise.all([
    openAdmin(config, false), import('../../admin/admin-service.ts'), import('../../domains/domain-registry.ts'), import('../../links/link-key.ts'),
  ]);
  let registry: Awaited<ReturnType<typeof createDomainRegistry>> | undefined;
  // Read only by a takedown that names a domain: the server's rule, from the domains the database holds.
  const keyOf = async (shortCode: string, domain: string | undefined): Promise<string> => {
    if (domain === undefined || domain === '') return shortCode;
    registry ??= await createDomainRegistry({ store: store.domains, baseUrl: config.baseUrl, refreshMs: 3_600_000 });
    const named = registry.named(domain);
    return linkKey(named.isDefault ? null : named.host, shortCode);
  };
  try {
    // A running server sees the change within its account cache's lifetime (500 ms).
    const admin = createAdminService({ store, accountChanged: () => {}, keyOf });
    return await work(admin, store, config);
  } catch (error) {
    // The service's refusals (bad host, unknown uid, cap below held) are the operator's to fix.
    if (error instanceof DomainError) throw new CliFailure(error.message);
    throw error;
  } finally {
    await store.close();
  }
}

/** Every page of a list, as JSON lines, up to `max` items. */
async function printPages<T>(
  context: CliContext,
  fetchPage: (cursor: string | undefined, limit: string) => Promise<{ items: readonly T[]; next: string | undefined }>,
  line: (item: T) => unknown,
  max: number | undefined,
): Promise<number> {
  let printed = 0;
  let cursor: string | undefined;
  do {
    const limit = String(Math.min(1000, max === undefined ? 1000 : max - printed));
    const page = await fetchPage(cursor, limit);
    for (const item of page.items) context.stdout.write(`${JSON.stringify(line(item))}\n`);
    printed += page.items.length;
    cursor = page.next;
  } while (cursor !== undefined && (max === undefined || printed < max));
  return printed;
}

function limitOf(command: Command, raw: string | undefined): number | undefined {
  return raw === undefined ? undefined : wholeNumber(command, '--limit', raw, 1);
}

export const listAccounts: Command = {
  name: 'admin accounts',
  summary: 'list accounts with their caps, links held and state: admin accounts [--limit N]',
  help: `Usage: shortlink admin accounts [--limit N]

Prints every account (or the first N), by Uid, one JSON object per line:
Uid, DateCreated, MaxLinks, Links (held now) and Disabled. Never an access code: only its
digest is stored.
${DATABASE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, { command: listAccounts, options: { limit: { type: 'string' } }, positionals: [] });
    if (parsed === undefined) return 0;
    const max = limitOf(listAccounts, parsed.values.limit);
    await withAdmin(context, (admin) => printPages(context, (cursor, limit) => admin.listAccounts({ cursor, limit }), adminAccountBody, max));
    return 0;
  },
};

function toggle(name: 'disable' | 'enable'): Command {
  const command: Command = {
    name: `admin ${name}`,
    summary: name === 'disable'
      ? "disable an account (its calls 403, its links 410): admin disable UID"
      : 'enable a disabled account again: admin enable UID',
    help: `Usage: shortlink admin ${name} UID

${name === 'disable'
    ? `Disables account UID: every call made with its access code answers 403 ("the account is
disabled") and its links answer 410 instead of redirecting, without being counted. Nothing is
deleted; "shortlink admin enable UID" undoes it.`
    : 'Enables account UID again: its calls and its links work as before it was disabled.'}
Running servers see the change within half a second.
${DATABASE_HELP}
`,
    async run(args, context) {
      const parsed = parseCommand(args, context, { command, options: {}, positionals: ['uid'] });
      if (parsed === undefined) return 0;
      const uid = wholeNumber(command, 'UID', parsed.positionals[0]!, 1);
      const account = await withAdmin(context, (admin) => admin.updateAccount({ uid: String(uid), disabled: String(name === 'disable') }));
      context.stdout.write(`Account ${uid}: ${account.disabled ? 'disabled' : 'enabled'} (holds ${account.linkCount} links).\n`);
      return 0;
    },
  };
  return command;
}

export const disableAccount = toggle('disable');
export const enableAccount = toggle('enable');

export const searchLinks: Command = {
  name: 'admin links',
  summary: 'search links across accounts: admin links [--host HOST] [--query TEXT] [--limit N]',
  help: `Usage: shortlink admin links [--host HOST] [--query TEXT] [--limit N]

Prints the links of every account that match, oldest first, one JSON object per line
(LinkDetails): ShortCode, PointsTo, CreatedBy, Accesses, DateCreated, Title, Tags, ExpiresAt,
MaxVisits, Domain (null for the default domain), ForwardQuery, Protected, Rules.

Options:
  --host HOST     targets on HOST or any of its subdomains (example.com matches
                  www.example.com, not notexample.com); Unicode or punycode alike
  --query TEXT    case-insensitive TEXT in the shortcode, the target or the title
  --limit N       print at most N links
Both filters together must both match; neither prints every link.
${DATABASE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, {
      command: searchLinks,
      options: { host: { type: 'string' }, query: { type: 'string', short: 'q' }, limit: { type: 'string' } },
      positionals: [],
    });
    if (parsed === undefined) return 0;
    const { host, query } = parsed.values;
    const max = limitOf(searchLinks, parsed.values.limit);
    const count = await withAdmin(context, (admin) =>
      printPages(context, (cursor, limit) => admin.searchLinks({ host, q: query, cursor, limit }), linkDetailsBody, max));
    context.stderr.write(`${count} links.\n`);
    return 0;
  },
};

export const takeDown: Command = {
  name: 'admin takedown',
  summary: "delete any account's link: admin takedown SHORTCODE [--domain HOST]",
  help: `Usage: shortlink admin takedown SHORTCODE [--domain HOST]

Deletes the link SHORTCODE whoever holds it (a phishing or abusive target): it answers 404
from then on, its account gets its slot back and the shortcode is free again.

Options:
  --domain HOST   the link's domain (a registered host); omitted, the default domain.
                  "shortlink admin links" shows each link's Domain
${DATABASE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, { command: takeDown, options: { domain: { type: 'string' } }, positionals: ['shortcode'] });
    if (parsed === undefined) return 0;
    const short = parsed.positionals[0]!;
    if (short === '') throw new UsageError(takeDown.name, 'SHORTCODE is empty');
    const link = await withAdmin(context, (admin) => admin.takeDown(short, parsed.values.domain));
    // The key names the link: host/code off the default domain.
    context.stdout.write(`Took down ${link.shortCode} → ${link.pointsTo} (account ${link.createdBy}).\n`);
    return 0;
  },
};
