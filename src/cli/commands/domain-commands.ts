/**
 * `shortlink admin domains add|list|remove`, directly on the database (like the other admin
 * commands): the same rules as `/v1/admin/domain(s)`, through the same domain service, so a
 * refused origin or a domain still in use reads alike from the CLI and the API.
 */
import type { DomainService } from '../../domains/domain-service.ts';
import { DomainError } from '../../errors.ts';
import { adminDomainBody } from '../../http/presenters.ts';
import { CliFailure, parseCommand, UsageError, type CliContext, type Command } from '../command.ts';
import { DATABASE_HELP, openAdmin } from './admin-commands.ts';
import { configOf } from './server-commands.ts';

const DEFAULT_DOMAIN_HELP = `The default domain is BASE_URL's host: set BASE_URL as the servers have it (default
http://localhost:8080). Running servers see a change within a second.`;

const HELP = `Usage: shortlink admin domains add ORIGIN [--not-found-url URL] [--root-url URL] [--expired-url URL]
       shortlink admin domains list
       shortlink admin domains remove HOST

Short links may live on more than one domain (see "Several domains" in docs/deployment.md).

  add ORIGIN    registers the domain of ORIGIN (like https://go.example.com: scheme, host and
                optional port, no path), or sets the fallbacks of one already registered. A
                fallback omitted is none, so give all of them each time. ORIGIN on the
                default domain's host sets the default domain's fallbacks.
      --not-found-url URL   where a visit to an unknown shortcode is sent (302)
      --root-url URL        where a visit to / is sent (302); on the default domain the
                            web UI is then at /ui
      --expired-url URL     where an expired, used-up or disabled link is sent (302)
  list          prints every domain, the default first, one JSON object per line: Host,
                Origin, NotFoundUrl, RootUrl, ExpiredUrl, Links (held now), DateCreated
  remove HOST   removes a registered domain; refused while links use it (delete or take
                them down first) and for the default domain

${DEFAULT_DOMAIN_HELP}
${DATABASE_HELP}
`;

/** Runs `work` with the domain service over a freshly opened admin store, then closes it. */
async function withDomains<R>(context: CliContext, work: (domains: DomainService) => Promise<R>): Promise<R> {
  const config = configOf(context.env);
  const [store, { createDomainService }] = await Promise.all([openAdmin(config, false), import('../../domains/domain-service.ts')]);
  try {
    // No registry here: running servers read the table again within their refresh period.
    return await work(createDomainService({ store: store.domains, baseUrl: config.baseUrl }));
  } catch (error) {
    // The service's refusals (a bad origin, a domain in use, an unknown host) are the operator's to fix.
    if (error instanceof DomainError) throw new CliFailure(error.message);
    throw error;
  } finally {
    await store.close();
  }
}

export const domains: Command = {
  name: 'admin domains',
  summary: 'register, list or remove the domains short links may use: admin domains add|list|remove',
  help: HELP,
  async run(args, context) {
    const [action, ...rest] = args;
    if (action === undefined) throw new UsageError(domains.name, 'missing the action: add, list or remove');
    if (action === '--help' || action === '-h') {
      context.stdout.write(HELP);
      return 0;
    }
    if (action === 'add') return add(rest, context);
    if (action === 'list') return list(rest, context);
    if (action === 'remove') return remove(rest, context);
    throw new UsageError(domains.name, `unknown action ${JSON.stringify(action)}: add, list or remove`);
  },
};

async function add(args: readonly string[], context: CliContext): Promise<number> {
  const parsed = parseCommand(args, context, {
    command: domains,
    options: { 'not-found-url': { type: 'string' }, 'root-url': { type: 'string' }, 'expired-url': { type: 'string' } },
    positionals: ['origin'],
  });
  if (parsed === undefined) return 0;
  const { 'not-found-url': notFoundUrl, 'root-url': rootUrl, 'expired-url': expiredUrl } = parsed.values;
  const domain = await withDomains(context, (service) => service.put({ origin: parsed.positionals[0], notFoundUrl, rootUrl, expiredUrl }));
  const what = domain.dateCreated === null ? `The default domain ${domain.host}` : `Domain ${domain.host}`;
  const fallbacks = [['not found', domain.notFoundUrl], ['root', domain.rootUrl], ['expired', domain.expiredUrl]]
    .filter(([, url]) => url !== null).map(([name, url]) => `${name} → ${url}`);
  context.stdout.write(`${what}: ${domain.origin}, ${fallbacks.length === 0 ? 'no fallbacks' : fallbacks.join(', ')} (holds ${domain.links} links).\n`);
  return 0;
}

async function list(args: readonly string[], context: CliContext): Promise<number> {
  const parsed = parseCommand(args, context, { command: domains, options: {}, positionals: [] });
  if (parsed === undefined) return 0;
  const all = await withDomains(context, (service) => service.list());
  for (const domain of all) context.stdout.write(`${JSON.stringify(adminDomainBody(domain))}\n`);
  return 0;
}

async function remove(args: readonly string[], context: CliContext): Promise<number> {
  const parsed = parseCommand(args, context, { command: domains, options: {}, positionals: ['host'] });
  if (parsed === undefined) return 0;
  const host = parsed.positionals[0]!;
  if (host === '') throw new UsageError(domains.name, 'HOST is empty');
  await withDomains(context, (service) => service.delete(host));
  context.stdout.write(`Removed the domain ${host.toLowerCase()}.\n`);
  return 0;
}
