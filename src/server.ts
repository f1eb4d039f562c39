/**
 * The entry point of `npm start` (`node src/server.ts`): the configuration from the
 * environment, then the server. Cluster workers re-run this file.
 */
import { ConfigError, loadConfig, type Config } from './config.ts';
import { failStart, startServer } from './start-server.ts';

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  failStart(error instanceof ConfigError ? error.message : `Unable to start: ${String(error)}`);
}
await startServer(config);
