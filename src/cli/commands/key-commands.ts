/**
 * `shortlink keys create|list|delete`: the account's API keys (CONTRACT §8.5) from the command
 * line, through the client library like the other API commands. They take the access code.
 */
import type { ApiKeyScope } from '../../../packages/client/src/index.ts';
import { parseCommand, UsageError, type Command } from '../command.ts';
import { authenticatedClient, CODE_HELP, CODE_OPTIONS, printJson } from './api-commands.ts';

const SCOPES = 'links:read,links:write,stats:read,webhooks';

export const keysCreate: Command = {
  name: 'keys create',
  summary: 'create an API key: keys create NAME SCOPES',
  help: `Usage: shortlink keys create NAME SCOPES [--code-file PATH] [--server URL]

Creates an API key named NAME allowed SCOPES (comma-separated from ${SCOPES})
and prints it as JSON with its Key (slk_…): keep it, it is never shown again. A key is sent
like the access code (SHORTLINK_ACCESS_CODE or --code-file work with it too) and allows only
what its scopes name. At most 20 keys per account.
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, { command: keysCreate, options: CODE_OPTIONS, positionals: ['name', 'scopes'] });
    if (parsed === undefined) return 0;
    const [name, scopes] = parsed.positionals as [string, string];
    if (scopes.trim() === '') throw new UsageError(keysCreate.name, `SCOPES must name some of ${SCOPES}`);
    const created = await authenticatedClient(keysCreate, context, parsed.values).keys.create(name, scopes.split(',') as ApiKeyScope[]);
    printJson(context, created);
    context.stderr.write('The key cannot be shown again: keep it now.\n');
    return 0;
  },
};

export const keysList: Command = {
  name: 'keys list',
  summary: 'list your API keys',
  help: `Usage: shortlink keys list [--json] [--code-file PATH] [--server URL]

Lists your API keys, oldest first: id, scopes, last use and name, one per line (never the keys).

Options:
  --json              print the API's JSON array instead
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, { command: keysList, options: { ...CODE_OPTIONS, json: { type: 'boolean' } }, positionals: [] });
    if (parsed === undefined) return 0;
    const list = await authenticatedClient(keysList, context, parsed.values).keys.list();
    if (parsed.values.json === true) printJson(context, list);
    else if (list.length === 0) context.stdout.write('No API keys.\n');
    else for (const key of list) context.stdout.write(`${key.Id}  ${key.Scopes.join(',')}  ${key.LastUsed ?? 'never used'}  ${key.Name}\n`);
    return 0;
  },
};

export const keysDelete: Command = {
  name: 'keys delete',
  summary: 'delete one of your API keys: keys delete ID',
  help: `Usage: shortlink keys delete ID [--code-file PATH] [--server URL]

Deletes your API key ID: from then on it is refused everywhere within a second.
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, { command: keysDelete, options: CODE_OPTIONS, positionals: ['id'] });
    if (parsed === undefined) return 0;
    const id = parsed.positionals[0]!;
    await authenticatedClient(keysDelete, context, parsed.values).keys.delete(id);
    context.stdout.write(`Deleted ${id}\n`);
    return 0;
  },
};
