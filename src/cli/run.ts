/**
 * The command table, the top-level help, and the one place where failures become messages and
 * exit codes.
 */
import { readFileSync } from 'node:fs';
import { ShortlinkError } from '../../packages/client/src/index.ts';
import { CliFailure, ExitCode, UsageError, type CliContext, type Command } from './command.ts';
import { exportLinks, setMaxLinks } from './commands/admin-commands.ts';
import { domains } from './commands/domain-commands.ts';
import {
  accountCreate, accountDelete, accountInfo, accountRotate, deleteLink, edit, events, links, resolve, shorten, stats,
} from './commands/api-commands.ts';
import { webhooksAdd, webhooksDeliveries, webhooksDelete, webhooksList } from './commands/webhook-commands.ts';
import { importLinks } from './commands/import-command.ts';
import { keysCreate, keysDelete, keysList } from './commands/key-commands.ts';
import { disableAccount, enableAccount, listAccounts, searchLinks, takeDown } from './commands/moderation-commands.ts';
import { migrate, serve } from './commands/server-commands.ts';

const GROUPS: readonly { readonly title: string; readonly commands: readonly Command[] }[] = [
  { title: 'Server', commands: [serve, migrate] },
  {
    title: 'Your account and links, through a running server (--server URL, default http://localhost:8080)',
    commands: [
      accountCreate, accountInfo, accountRotate, accountDelete, shorten, edit, links, resolve, deleteLink, stats, events,
      webhooksAdd, webhooksList, webhooksDelete, webhooksDeliveries,
    ],
  },
  { title: 'API keys of your account, through a running server (with the access code)', commands: [keysCreate, keysList, keysDelete] },
  {
    title: 'Administration, directly on the database named by DATABASE_URL',
    commands: [listAccounts, setMaxLinks, disableAccount, enableAccount, searchLinks, takeDown, domains, exportLinks, importLinks],
  },
];

/**
 * The Node the server and the database commands need: node:sqlite unflagged, and what the
 * tests run. The commands that talk to a server over HTTP run on Node 20 too (an installed
 * package runs on the Node that installed it; bin/shortlink.js).
 */
export const SERVER_NODE_MAJOR = 24;
// By title, not position: a group inserted before them once made this name the API keys instead.
const NEEDS_SERVER_NODE: ReadonlySet<Command> = new Set(
  GROUPS.filter((group) => group.title === 'Server' || group.title.startsWith('Administration')).flatMap((group) => group.commands),
);

const COMMANDS = new Map(GROUPS.flatMap((group) => group.commands.map((command) => [command.name, command] as const)));
/** Words that only open a group of commands: `account`, `admin`. */
const PREFIXES = new Set([...COMMANDS.keys()].filter((name) => name.includes(' ')).map((name) => name.split(' ')[0]!));

function usage(): string {
  const width = Math.max(...[...COMMANDS.keys()].map((name) => name.length));
  const sections = GROUPS.map(
    (group) => `${group.title}:\n${group.commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}`,
  );
  return `Usage: shortlink <command> [options]

${sections.join('\n\n')}

Access codes come from SHORTLINK_ACCESS_CODE or --code-file PATH (a file only you can read,
chmod 600), never from the command line.

Run "shortlink <command> --help" for a command's options.
Exit status: 0 success, 1 failure (an error answer, a refused file, the database), 2 bad usage.
`;
}

function groupUsage(prefix: string): string {
  const commands = [...COMMANDS.values()].filter((c) => c.name.startsWith(`${prefix} `));
  const width = Math.max(...commands.map((c) => c.name.length));
  return `Usage: shortlink ${prefix} <${commands.map((c) => c.name.slice(prefix.length + 1)).join('|')}> [options]

${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Run "shortlink ${prefix} <command> --help" for a command's options.
`;
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** Runs one command line and returns the exit status (undefined while `serve` keeps running). */
export async function runCli(argv: readonly string[], context: CliContext): Promise<number> {
  const [first, second] = argv;
  if (first === undefined) {
    context.stderr.write(usage());
    return ExitCode.Usage;
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    context.stdout.write(usage());
    return ExitCode.Ok;
  }
  if (first === '--version' || first === '-v') {
    context.stdout.write(`shortlink ${version()}\n`);
    return ExitCode.Ok;
  }

  let command: Command | undefined;
  let rest: readonly string[];
  if (PREFIXES.has(first)) {
    if (second === undefined || second === '--help' || second === '-h') {
      (second === undefined ? context.stderr : context.stdout).write(groupUsage(first));
      return second === undefined ? ExitCode.Usage : ExitCode.Ok;
    }
    command = COMMANDS.get(`${first} ${second}`);
    rest = argv.slice(2);
    if (command === undefined) return usageFailure(context, `unknown command "${first} ${second}"`, first);
  } else {
    command = COMMANDS.get(first);
    rest = argv.slice(1);
    if (command === undefined) return usageFailure(context, `unknown command "${first}"`);
  }

  const major = Number(process.versions.node.split('.')[0]);
  if (major < SERVER_NODE_MAJOR && NEEDS_SERVER_NODE.has(command) && !rest.includes('--help') && !rest.includes('-h')) {
    context.stderr.write(
      `shortlink ${command.name}: needs Node ${SERVER_NODE_MAJOR} or newer (it opens the database), and this is Node ${process.versions.node}; ` +
        'the commands that talk to a server (account, shorten, links, …) run on this Node\n',
    );
    return ExitCode.Failure;
  }
  try {
    return await command.run(rest, context);
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(context, error.message, error.command);
    context.stderr.write(`shortlink ${command.name}: ${describeFailure(error)}\n`);
    return ExitCode.Failure;
  }
}

function usageFailure(context: CliContext, message: string, command?: string): number {
  context.stderr.write(`shortlink: ${message}\nRun "shortlink ${command === undefined ? '' : `${command} `}--help" for usage.\n`);
  return ExitCode.Usage;
}

function describeFailure(error: unknown): string {
  if (error instanceof ShortlinkError) {
    return `${error.message} (HTTP ${error.status}${error.retryAfter === undefined ? '' : `, retry after ${error.retryAfter} s`})`;
  }
  if (error instanceof CliFailure) return error.message;
  if (error instanceof Error && error.name === 'TimeoutError') return 'the server did not answer in time';
  // Anything else is a bug or an unexpected database failure: one line, the detail kept short.
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}
