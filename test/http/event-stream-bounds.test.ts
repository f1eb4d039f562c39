/**
 * The stream route's own bounds, on a bare Fastify with short times: heartbeats, the total
 * cap, and a reader that falls behind being dropped.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import Fastify from 'fastify';
import { createLiveEvents, serviceEvent } from '../../src/events/live-events.ts';
import { EventType } from '../../src/events/events.ts';
import { registerErrorHandlers } from '../../src/http/error-handlers.ts';
import { registerEventRoutes } from '../../src/http/routes/events.ts';
import { openEventStream } from '../helpers/event-stream.ts';
import { waitFor } from '../helpers/wait-for.ts';

async function bareApp(t: TestContext, bounds: Parameters<typeof registerEventRoutes>[1]['bounds']) {
  const app = Fastify();
  app.decorateRequest('account', null);
  registerErrorHandlers(app);
  const live = createLiveEvents();
  // Slots that never refuse and whose credentials always hold: these bounds are the process's own.
  const held = new Set<string>();
  registerEventRoutes(app, {
    live,
    slots: {
      acquire: async (slot) => {
        held.add(slot.id);
        return 'acquired';
      },
      current: async () => [...held],
      renew: async () => undefined,
      release: async (ids) => ids.forEach((id) => held.delete(id)),
    },
    authenticate: async (request) => {
      const uid = Number(request.headers['x-uid'] ?? 1);
      request.account = { uid, dateCreated: '', maxLinks: 1, disabled: false, accessCode: 'x' };
    },
    untimed: () => undefined,
    isClosing: () => false,
    bounds,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  return { live, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

test('sends a heartbeat comment at the set interval', async (t) => {
  const { base } = await bareApp(t, { heartbeatMs: 30 });
  const stream = await openEventStream(base);
  t.after(() => stream.close());
  await waitFor(() => stream.comments.filter((c) => c === 'heartbeat').length >= 2, 'two heartbeats');
});

test('caps the streams of the process, whatever the account', async (t) => {
  const { base } = await bareApp(t, { total: 2 });
  const open = [await openEventStream(base, { 'x-uid': '1' }), await openEventStream(base, { 'x-uid': '2' })];
  t.after(() => open.forEach((s) => s.close()));
  const refused = await openEventStream(base, { 'x-uid': '3' });
  assert.equal(refused.status, 429);
});

test('drops a reader that has fallen too far behind, and stops listening for it', async (t) => {
  const { live, base } = await bareApp(t, { maxQueuedBytes: 64 * 1024 });
  const stream = await openEventStream(base);
  t.after(() => stream.close());
  // The client stops reading: the server's queue grows until the stream is dropped.
  stream.pause();
  const big = 'x'.repeat(16 * 1024);
  await waitFor(() => {
    for (let i = 0; i < 20; i++) live.publish(serviceEvent(EventType.LinkCreated, 1, { big }));
    return !live.wants('1');
  }, 'the lagging stream to be dropped');
});
