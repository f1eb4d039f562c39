/**
 * `npm run lint:openapi`: builds the app on a throwaway SQLite database, takes the OpenAPI
 * document it serves at /openapi.json (every optional operation switched on, so that all are
 * checked), and runs Redocly's recommended rules on it (redocly.yaml). Exits with Redocly's
 * status; warnings fail too (`--max-problems` is not the point: a clean document is).
 *
 *     node scripts/lint-openapi.ts [--out PATH]   also keep the document at PATH
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openStore } from '../src/store/open-store.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const folder = mkdtempSync(join(tmpdir(), 'shortlink-openapi-'));
let status: number;
try {
  const config = loadConfig({
    DATABASE_URL: join(folder, 'openapi.db'),
    LOG_LEVEL: 'silent',
    RATE_LIMIT: 'off',
    METRICS_TOKEN: 'openapi-lint-token-0123456789',
    // The webhook routes and the OpenAPI `webhooks` exist only with a key.
    WEBHOOK_SECRET_KEY: 'openapi-lint-webhook-key-0123456789',
  });
  const store = await openStore(config.storage);
  const app = await buildApp({ config, store });
  let document: string;
  try {
    document = (await app.inject('/openapi.json')).body;
  } finally {
    await app.close();
    await store.close();
  }
  const outIndex = process.argv.indexOf('--out');
  const path = outIndex > 0 && process.argv[outIndex + 1] !== undefined ? process.argv[outIndex + 1]! : join(folder, 'openapi.json');
  writeFileSync(path, document);
  const redocly = join(root, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
  const result = spawnSync(process.execPath, [redocly, 'lint', '--config', join(root, 'redocly.yaml'), '--max-problems', '1000', path], {
    stdio: 'inherit',
    // No telemetry and no update check: the lint runs offline, in CI and tests.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  status = result.status ?? 1;
} finally {
  rmSync(folder, { recursive: true, force: true });
}
process.exit(status);
