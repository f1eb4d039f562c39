/**
 * `/metrics` under WORKERS=2 (issue 13, item 16): a scrape reaches one worker but must count
 * the requests every worker answered, counters and histograms alike.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, test } from 'node:test';
import { cleanup, startServer, type ServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

const REQUESTS = 40;

after(cleanup);

/** One request on its own connection (the primary hands connections to workers in turn). */
function fresh(server: ServerProcess, path: string): Promise<{ status: number; requestId: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { agent: false, timeout: 10_000 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, requestId: String(response.headers['x-request-id']), body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  assert.ok(line !== undefined, `the exposition has ${series}`);
  return Number(line.slice(series.length + 1));
}

test('WORKERS=2: one scrape counts the requests of both workers', { timeout: 600_000 }, async () => {
  const server = await startServer({ env: { WORKERS: '2' } });
  const listening = () => new Set(server.logs().filter((line) => String(line.msg).startsWith('Server listening at ')).map((line) => line.pid));
  await waitFor(() => listening().size === 2, 'both workers to listen');

  // Request ids start with the answering process's own random prefix.
  const answeredBy = new Set<string>();
  for (let i = 0; i < REQUESTS; i++) {
    const reply = await fresh(server, '/healthz');
    assert.equal(reply.status, 200);
    answeredBy.add(reply.requestId.split('-')[0]!);
  }
  assert.equal(answeredBy.size, 2, 'both workers answered');

  const labels = '{route="/healthz",method="GET",status_code="200"}';
  for (let scrape = 0; scrape < 4; scrape++) {
    const reply = await fresh(server, '/metrics');
    assert.equal(reply.status, 200, reply.body);
    assert.equal(sample(reply.body, `shortlink_http_requests_total${labels}`), REQUESTS, `scrape ${scrape}: requests_total`);
    assert.equal(sample(reply.body, `shortlink_http_request_duration_seconds_count${labels}`), REQUESTS, `scrape ${scrape}: histogram count`);
    assert.equal(
      sample(reply.body, `shortlink_http_request_duration_seconds_bucket{route="/healthz",method="GET",status_code="200",le="+Inf"}`),
      REQUESTS,
      `scrape ${scrape}: +Inf bucket`,
    );
  }
  process.kill(server.child.pid!, 'SIGTERM');
  assert.equal((await server.exited).code, 0);
});
