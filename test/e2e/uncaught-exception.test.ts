/**
 * What the server process does with an exception nothing caught (issue 23, item 1; ADR 23):
 * one log line, then the SIGTERM path (stop accepting, finish the requests in flight, close
 * the store) and exit 1 for the supervisor to start a fresh one, never a bare stack and an
 * instant death. The fault is injected from outside the product code, as a kill -STOP is for
 * PostgreSQL: a module preloaded with --import throws from a setImmediate (where the driver
 * defect of ADR 23 threw) when the process gets SIGUSR2.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { cleanup, startServer } from '../helpers/process.ts';

after(cleanup);

test('an uncaught exception is logged in one line, the server stops as on SIGTERM, and the process exits 1', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-fault-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const fault = join(dir, 'fault.mjs');
  writeFileSync(fault, `process.on('SIGUSR2', () => setImmediate(() => { throw new TypeError('injected fault'); }));\n`);
  const server = await startServer({ env: { NODE_OPTIONS: `--import=${pathToFileURL(fault).href}` } });

  assert.equal((await fetch(`${server.url}/v1/new_account`)).status, 200);

  process.kill(server.pid, 'SIGUSR2');
  const exit = await server.exited;

  assert.equal(exit.code, 1, 'exit 1, for the supervisor to restart it');
  assert.doesNotMatch(server.stderr(), /\S/, 'no bare stack on stderr');
  const fatal = server.logs().filter((line) => line.level === 60);
  assert.equal(fatal.length, 1, 'one log line for the exception');
  assert.match(String((fatal[0]!.err as { message?: string }).message), /injected fault/);
  const messages = server.logs().map((line) => line.msg);
  const from = messages.indexOf('uncaught exception; shutting down');
  assert.deepEqual(messages.slice(from).filter((msg) => msg !== 'request completed'), [
    'uncaught exception; shutting down', 'shutting down', 'stopped',
  ], 'the SIGTERM path: listener closed, requests finished, store closed');
});
