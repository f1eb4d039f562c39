/**
 * A webhook subscribed to link.visited, for the benchmarks that compare a resolution with and
 * without one watching it (issue 16, ADR 21): a receiver in this process that answers 200, and
 * the subscription written straight into a preloaded SQLite database, for the account of a
 * given link. The server must run with the same WEBHOOK_SECRET_KEY and WEBHOOK_ALLOW_PRIVATE=true.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as SecretBoxModule from '../src/webhooks/secret-box.ts';

export const WEBHOOK_KEY = 'bench-webhook-secret-key-0123456789abcdef';

/** The server environment a subscribed webhook needs. */
export const WEBHOOK_ENV = { WEBHOOK_SECRET_KEY: WEBHOOK_KEY, WEBHOOK_ALLOW_PRIVATE: 'true' } as const;

export interface WebhookReceiver {
  /** Deliveries received so far. */
  deliveries(): number;
  /**
   * Subscribes one webhook to link.visited for the account owning `code`, in the SQLite file
   * `path`, sealing its secret with the `root` checkout's own code.
   */
  subscribe(root: string, path: string, code: string): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  let deliveries = 0;
  const server: Server = createServer((request, response) => {
    request.resume().on('end', () => {
      deliveries++;
      response.end('ok');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    deliveries: () => deliveries,
    async subscribe(root, path, code) {
      const { createSecretBox, newSecret } = (await import(pathToFileURL(join(root, 'src', 'webhooks', 'secret-box.ts')).href)) as typeof SecretBoxModule;
      const db = new DatabaseSync(path);
      try {
        const { uid } = db.prepare('SELECT created_by AS uid FROM links WHERE short_code = ?').get(code) as { uid: number };
        db.prepare(`INSERT INTO webhooks (id, account_uid, url, events, visited, secret, date_created) VALUES ('wh_${'0'.repeat(24)}', ?, ?, 'link.visited', 1, ?, ?)`)
          .run(uid, url, createSecretBox(WEBHOOK_KEY).seal(newSecret()), new Date().toISOString());
        db.prepare('UPDATE accounts SET webhook_count = 1 WHERE uid = ?').run(uid);
      } finally {
        db.close();
      }
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
