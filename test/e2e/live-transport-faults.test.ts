/**
 * The live-event transports after their server went away and came back (ADR 19): messages
 * flow again without a restart of the service, and closing never waits for a reconnection.
 * Private PostgreSQL and Redis servers on spare ports, so the shared ones are never stopped.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LiveMessage, LiveTransport } from '../../src/events/live-events.ts';
import { createPostgresTransport } from '../../src/events/postgres-transport.ts';
import { createRedisTransport } from '../../src/events/redis-transport.ts';
import {
  privatePostgresGate, privateRedisGate, startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis,
} from '../helpers/private-services.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** Two transports: `a` sends interest messages (numbered) until `b` has heard one sent after `since`. */
async function flowsFrom(a: LiveTransport, heard: LiveMessage[], since: number): Promise<void> {
  let n = since;
  await waitFor(() => {
    a.send({ kind: 'interest', origin: 'a', uids: [String(++n)] });
    return heard.some((m) => m.kind === 'interest' && Number(m.uids[0]) > since);
  }, 'a message to cross', { timeoutMs: 20_000, intervalMs: 200 });
}

async function closesPromptly(transports: LiveTransport[]): Promise<void> {
  const began = performance.now();
  await Promise.all(transports.map((t) => t.close()));
  assert.ok(performance.now() - began < 3000, `closing took ${Math.round(performance.now() - began)} ms`);
}

describe('live-event transports across an outage', { timeout: 600_000 }, () => {
  const pgGate = privatePostgresGate();
  test('PostgreSQL: LISTEN again once the database is back', { skip: pgGate.skip }, async (t) => {
    const pg: PrivatePostgres = await startPrivatePostgres();
    t.after(() => pg.destroy());
    const errors: unknown[] = [];
    const a = createPostgresTransport({ url: pg.adminUrl, onError: (e) => errors.push(e) });
    const b = createPostgresTransport({ url: pg.adminUrl, onError: (e) => errors.push(e) });
    const heard: LiveMessage[] = [];
    await a.start(() => undefined);
    await b.start((m) => heard.push(m));
    await flowsFrom(a, heard, 0);

    await pg.stop('immediate');
    a.send({ kind: 'hello', origin: 'a' }); // lost, and reported, not thrown
    await pg.start();
    await flowsFrom(a, heard, 1000);
    assert.ok(errors.length > 0, 'the outage was reported');
    await closesPromptly([a, b]);
  });

  const redisGate = privateRedisGate();
  test('Redis: subscribed again once Redis is back', { skip: redisGate.skip }, async (t) => {
    const redis: PrivateRedis = await startPrivateRedis();
    t.after(() => redis.destroy());
    const a = createRedisTransport({ url: redis.url, prefix: 'test:' });
    const b = createRedisTransport({ url: redis.url, prefix: 'test:' });
    const heard: LiveMessage[] = [];
    await a.start(() => undefined);
    await b.start((m) => heard.push(m));
    await flowsFrom(a, heard, 0);

    await redis.kill9();
    a.send({ kind: 'hello', origin: 'a' });
    await redis.start();
    await flowsFrom(a, heard, 1000);
    await closesPromptly([a, b]);
  });
});

