/**
 * The whole-request deadline's bookkeeping (src/http/request-deadline.ts): one timer for all
 * requests, armed for the oldest. The end-to-end behaviour (503 wording, Retry-After, timing
 * through a real server) is in test/http/request-deadline.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply } from 'fastify';
import { createRequestDeadline } from '../../src/http/request-deadline.ts';

interface FakeReply {
  sent: boolean;
  raw: { destroyed: boolean; headersSent: boolean; destroy(error: Error): void };
  request: { routeOptions: { url: string } };
  send(error: Error): void;
  outcome: string | undefined;
}

function fakeReply(): FakeReply {
  const reply: FakeReply = {
    sent: false,
    outcome: undefined,
    raw: {
      destroyed: false,
      headersSent: false,
      destroy: (error) => (reply.outcome = `destroyed ${(error as Error & { code: string }).code}`),
    },
    request: { routeOptions: { url: '/x' } },
    send: (error) => (reply.outcome = `sent ${(error as Error & { code: string }).code} ${(error as Error & { statusCode: number }).statusCode}`),
  };
  return reply;
}

test('requests still pending at the deadline get the handler-timeout error; finished, answered and abandoned ones are left alone', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let clock = 0;
  const deadline = createRequestDeadline(60, () => clock);
  const advance = (ms: number) => {
    clock += ms;
    t.mock.timers.tick(ms);
  };
  const slow = fakeReply();
  const finished = fakeReply();
  const answeredLate = fakeReply();
  const abandoned = fakeReply();
  const streaming = fakeReply();
  for (const reply of [slow, finished, answeredLate, abandoned, streaming]) deadline.start(reply as unknown as FastifyReply);
  deadline.finish(finished as unknown as FastifyReply);
  answeredLate.sent = true; // answered, its 'finish' not seen yet
  abandoned.raw.destroyed = true; // the client went away: no 'finish' ever
  streaming.raw.headersSent = true;

  // A request started later times out later, by its own clock.
  advance(30);
  const later = fakeReply();
  deadline.start(later as unknown as FastifyReply);
  advance(29);
  assert.equal(slow.outcome, undefined, 'not due yet');
  advance(1);
  assert.equal(slow.outcome, 'sent FST_ERR_HANDLER_TIMEOUT 503');
  assert.equal(streaming.outcome, 'destroyed FST_ERR_HANDLER_TIMEOUT');
  for (const reply of [finished, answeredLate, abandoned]) assert.equal(reply.outcome, undefined);
  advance(29);
  assert.equal(later.outcome, undefined, 'not due yet');
  advance(1);
  assert.equal(later.outcome, 'sent FST_ERR_HANDLER_TIMEOUT 503');
});

test('a request finished in time is never touched, however many come and go', async () => {
  const deadline = createRequestDeadline(20);
  const replies = Array.from({ length: 1000 }, fakeReply);
  for (const reply of replies) deadline.start(reply as unknown as FastifyReply);
  for (const reply of replies) deadline.finish(reply as unknown as FastifyReply);
  await sleep(50);
  assert.ok(replies.every((reply) => reply.outcome === undefined));
});
