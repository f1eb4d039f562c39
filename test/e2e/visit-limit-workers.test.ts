/**
 * Guarantee 7 across processes on one SQLite file: with WORKERS=3, each worker has its own
 * connection and its own group commit, and the write lock orders their batches. Requests on
 * fresh connections are spread over the workers; however they race, exactly max_visits of
 * them succeed, with distinct counts, and an edit raising the limit mid-race is honoured.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, test } from 'node:test';
import { cleanup, startServer, type ServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

after(cleanup);

interface Reply {
  status: number;
  body: string;
}

/** One request on its own connection (the primary hands connections to workers in turn). */
function fresh(server: ServerProcess, method: string, path: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { method, agent: false, timeout: 10_000, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

test('WORKERS=3 on SQLite: max_visits lets exactly N resolutions through, also with an edit racing them', { timeout: 600_000 }, async () => {
  const server = await startServer({ env: { WORKERS: '3' } });
  const listening = () => new Set(server.logs().filter((line) => String(line.msg).startsWith('Server listening at ')).map((line) => line.pid));
  await waitFor(() => listening().size === 3, 'all three workers to listen');

  const account = JSON.parse((await fresh(server, 'GET', '/v1/new_account')).body) as { AccessCode: string };
  const auth = { authorization: `Bearer ${account.AccessCode}` };
  const create = await fresh(server, 'GET', `/v1/link?url=https://example.org/w&short=workers-limit&max_visits=40`, auth);
  assert.equal(create.status, 200, create.body);

  const race = async (clients: number, each: number, during?: () => Promise<Reply>) => {
    const edits: Promise<Reply>[] = [];
    const replies = await Promise.all(Array.from({ length: clients }, async (_, client) => {
      const mine: Reply[] = [];
      for (let n = 0; n < each; n++) {
        if (during !== undefined && client === 0 && n === Math.floor(each / 2)) edits.push(during());
        mine.push(await fresh(server, 'GET', n % 2 === 0 ? '/v1/get/workers-limit' : '/workers-limit'));
      }
      return mine;
    }));
    for (const edit of await Promise.all(edits)) assert.equal(edit.status, 200, edit.body);
    return replies.flat();
  };

  const first = await race(20, 8);
  const granted = first.filter((reply) => reply.status === 200 || reply.status === 302);
  assert.equal(granted.length, 40);
  assert.equal(first.filter((reply) => reply.status === 410).length, 120);
  const counts = first.filter((reply) => reply.status === 200).map((reply) => (JSON.parse(reply.body) as { Accesses: number }).Accesses);
  assert.equal(new Set(counts).size, counts.length, 'distinct counts');

  // Raise the limit to 70 while another 160 race: the total ends at exactly 70.
  const second = await race(20, 8, () => fresh(server, 'PATCH', '/v1/link?short=workers-limit&max_visits=70', auth));
  assert.ok(second.every((reply) => [200, 302, 410].includes(reply.status)));
  const list = JSON.parse((await fresh(server, 'GET', '/v1/links', auth)).body) as { Accesses: number }[];
  assert.equal(list[0]!.Accesses, 70);
  assert.equal(second.filter((reply) => reply.status === 200 || reply.status === 302).length, 30);

  // The primary's pid (server.stop signals the process the logs name, a worker here).
  process.kill(server.child.pid!, 'SIGTERM');
  assert.equal((await server.exited).code, 0);
});
