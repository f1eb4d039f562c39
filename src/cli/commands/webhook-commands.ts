/**
 * `shortlink webhooks add|list|delete|deliveries`: the webhook API (CONTRACT §7.5) from the
 * command line, through the client library like the other API commands.
 */
import { parseCommand, type Command } from '../command.ts';
import { authenticatedClient, CODE_HELP, CODE_OPTIONS, JSON_ALREADY, JSON_ALREADY_HELP, printJson } from './api-commands.ts';

const EVENTS = 'link.created,link.updated,link.deleted,link.visited,account.rotated';

export const webhooksAdd: Command = {
  name: 'webhooks add',
  summary: 'register a webhook: webhooks add URL [EVENTS] (all five event types without EVENTS)',
  help: `Usage: shortlink webhooks add URL [EVENTS] [--json] [--code-file PATH] [--server URL]

Registers URL to receive the events EVENTS (comma-separated from ${EVENTS};
all of them when omitted), and prints the webhook as JSON (always: there is no other form)
with its signing Secret: keep it, it is never shown again. At most 5 webhooks per account.

Options:
${JSON_ALREADY_HELP}
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, { command: webhooksAdd, options: { ...CODE_OPTIONS, ...JSON_ALREADY }, positionals: ['url', 'events?'] });
    if (parsed === undefined) return 0;
    const [url, events = EVENTS] = parsed.positionals;
    const created = await authenticatedClient(webhooksAdd, context, parsed.values).createWebhook(url!, events.split(','));
    printJson(context, created);
    return 0;
  },
};

export const webhooksList: Command = {
  name: 'webhooks list',
  summary: 'list your webhooks',
  help: `Usage: shortlink webhooks list [--json] [--code-file PATH] [--server URL]

Lists your webhooks, oldest first: id, events and URL, one per line (no secrets).

Options:
  --json              print the API's JSON array instead
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, { command: webhooksList, options: { ...CODE_OPTIONS, json: { type: 'boolean' } }, positionals: [] });
    if (parsed === undefined) return 0;
    const list = await authenticatedClient(webhooksList, context, parsed.values).listWebhooks();
    if (parsed.values.json === true) printJson(context, list);
    else if (list.length === 0) context.stdout.write('No webhooks.\n');
    else for (const webhook of list) context.stdout.write(`${webhook.Id}  ${webhook.Events.join(',')}  ${webhook.Url}\n`);
    return 0;
  },
};

export const webhooksDelete: Command = {
  name: 'webhooks delete',
  summary: 'delete one of your webhooks: webhooks delete ID',
  help: `Usage: shortlink webhooks delete ID [--json] [--code-file PATH] [--server URL]

Deletes your webhook ID; its pending events are dropped with it.

Options:
  --json              print {"Deleted": ID} instead
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, { command: webhooksDelete, options: { ...CODE_OPTIONS, json: { type: 'boolean' } }, positionals: ['id'] });
    if (parsed === undefined) return 0;
    const id = parsed.positionals[0]!;
    await authenticatedClient(webhooksDelete, context, parsed.values).deleteWebhook(id);
    if (parsed.values.json === true) printJson(context, { Deleted: id });
    else context.stdout.write(`Deleted ${id}\n`);
    return 0;
  },
};

export const webhooksDeliveries: Command = {
  name: 'webhooks deliveries',
  summary: 'the last 100 delivery attempts of a webhook: webhooks deliveries ID',
  help: `Usage: shortlink webhooks deliveries ID [--json] [--code-file PATH] [--server URL]

Shows the last 100 delivery attempts of your webhook ID, newest first: time, event type,
attempt number, the receiver's status (- without an answer), the event id and the error.

Options:
  --json              print the API's JSON array instead
${CODE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, {
      command: webhooksDeliveries, options: { ...CODE_OPTIONS, json: { type: 'boolean' } }, positionals: ['id'],
    });
    if (parsed === undefined) return 0;
    const list = await authenticatedClient(webhooksDeliveries, context, parsed.values).webhookDeliveries(parsed.positionals[0]!);
    if (parsed.values.json === true) printJson(context, list);
    else if (list.length === 0) context.stdout.write('No deliveries yet.\n');
    else {
      for (const d of list) {
        context.stdout.write(`${d.Time}  ${d.Type.padEnd(15)}  #${d.Attempt}  ${d.Status ?? '-'}  ${d.EventId}${d.Error === null ? '' : `  ${d.Error}`}\n`);
      }
    }
    return 0;
  },
};
