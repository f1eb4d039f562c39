/**
 * `serve` and `migrate`: the server itself, and its database set up without serving.
 */
import { ConfigError, loadConfig, type Config } from '../../config.ts';
import { CliFailure, parseCommand, type Command, type Env } from '../command.ts';

/** The configuration every database command reads, with config errors as one-line failures. */
export function configOf(env: Env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) throw new CliFailure(error.message.replace(/^Unable to start: /, 'bad configuration: '));
    throw error;
  }
}

/** Where the data is, for messages: the SQLite path, or the PostgreSQL URL without its password. */
export function describeStorage(config: Config): string {
  if (config.storage.kind === 'sqlite') return `SQLite ${config.storage.path}`;
  const url = URL.parse(config.storage.url);
  if (url === null) return 'PostgreSQL';
  if (url.password !== '') url.password = '***';
  return `PostgreSQL ${url.href}`;
}

/**
 * What `migrate` did, in one line: how many migrations it applied (a first run on an empty
 * database applies them all), or that there was nothing to apply.
 */
export function describeMigration(applied: number, where: string): string {
  if (applied === 0) return `The database is up to date (${where}).\n`;
  return `Applied ${applied} migration${applied === 1 ? '' : 's'} (${where}); the database is up to date.\n`;
}

const ENVIRONMENT_HELP = `
Configured by the environment, exactly as the server is: DATABASE_URL names the database
(a SQLite file path, or postgres://…), default ./data/shortlinks.db. See the README.`;

export const serve: Command = {
  name: 'serve',
  summary: 'run the server (like npm start)',
  help: `Usage: shortlink serve

Runs the Shortlink server in the foreground, exactly like "npm start": it listens on
$HOST:$PORT (default 0.0.0.0:8080), logs JSON lines to stdout, and stops cleanly on SIGTERM
or SIGINT. With WORKERS=n it runs n server processes.
${ENVIRONMENT_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, { command: serve, options: {}, positionals: [] });
    if (parsed === undefined) return 0;
    let config: Config;
    try {
      config = loadConfig(context.env);
    } catch (error) {
      // Worded as `npm start` words it: this is the server starting.
      if (!(error instanceof ConfigError)) throw error;
      context.stderr.write(`${error.message}\n`);
      return 1;
    }
    const { startServer } = await import('../../start-server.ts');
    // Workers re-run this command: they get the same environment, so the same configuration.
    await startServer(config, { workerEnv: context.env });
    return 0;
  },
};

export const migrate: Command = {
  name: 'migrate',
  summary: 'create or update the database schema, then exit',
  help: `Usage: shortlink migrate

Opens the database named by DATABASE_URL (creating a SQLite file if needed), applies every
pending migration, and exits. The server does the same at start; this lets a deployment do it
once, before starting any instance.
${ENVIRONMENT_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, { command: migrate, options: {}, positionals: [] });
    if (parsed === undefined) return 0;
    const config = configOf(context.env);
    const { migrateDatabase } = await import('../../store/open-store.ts');
    let applied;
    try {
      applied = await migrateDatabase(config.storage);
    } catch (error) {
      throw new CliFailure(`cannot open the database (${(error as Error).message.split('\n')[0]})`);
    }
    context.stdout.write(describeMigration(applied, describeStorage(config)));
    return 0;
  },
};
