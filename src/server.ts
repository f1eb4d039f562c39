/**
 * The entry point and the only place with side effects: read the configuration, open the
 * store, build the app, listen, and shut down cleanly on SIGTERM or SIGINT.
 */
import { buildApp } from './app.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { openStore } from './store/open-store.ts';
import type { Store } from './store/store.ts';

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  fail(error instanceof ConfigError ? error.message : `Unable to start: ${String(error)}`);
}

let store: Store;
try {
  store = await openStore(config.storage);
} catch (error) {
  fail(`Unable to start: cannot open the database (${(error as Error).message.split('\n')[0]})`);
}

const app = await buildApp({ config, store });

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  app.log.info({ signal }, 'shutting down');
  // If something hangs, give up before the 10 s a supervisor typically allows.
  const deadline = setTimeout(() => {
    app.log.error('shutdown timed out; exiting');
    process.exit(1);
  }, config.shutdownTimeoutMs);
  deadline.unref();
  try {
    await app.close();
    await store.close();
    app.log.info('stopped');
    process.exitCode = 0;
  } catch (error) {
    app.log.error({ err: error }, 'shutdown failed');
    process.exitCode = 1;
  }
  clearTimeout(deadline);
}
process.once('SIGTERM', () => void stop('SIGTERM'));
process.once('SIGINT', () => void stop('SIGINT'));

try {
  await app.listen({ port: config.port, host: config.host });
} catch (error) {
  await store.close();
  fail(`Unable to start: cannot listen on ${config.host}:${config.port} (${(error as Error).message})`);
}
