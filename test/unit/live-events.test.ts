import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EventType, type ServiceEvent } from '../../src/events/events.ts';
import { createLiveEvents, serviceEvent, type LiveMessage, type LiveTransport } from '../../src/events/live-events.ts';
import { channelFor, createPayloadAssembler, notifyPayloads, NOTIFY_CHANNEL } from '../../src/events/postgres-transport.ts';
import { createEventPublisher, VISITS_PER_EVENT } from '../../src/http/event-payloads.ts';
import type { BatchCall } from '../../src/store/group-commit.ts';
import type { Visit } from '../../src/stats/visit.ts';

function fakeTransport() {
  const sent: LiveMessage[] = [];
  let receive: (message: LiveMessage) => void = () => undefined;
  const transport: LiveTransport = {
    name: 'fake',
    async start(r) {
      receive = r;
    },
    send: (message) => void sent.push(message),
    close: async () => undefined,
  };
  return { transport, sent, deliver: (message: LiveMessage) => receive(message) };
}

const event = (uid: string, type = EventType.LinkCreated): ServiceEvent => serviceEvent(type, uid, { n: 1 });

describe('live events hub', () => {
  test('delivers to the account\'s listeners only, and stops after unsubscribe', () => {
    const live = createLiveEvents();
    const heard: string[] = [];
    const stop = live.subscribe('1', (e) => heard.push(`a:${e.accountUid}`));
    live.subscribe('2', (e) => heard.push(`b:${e.accountUid}`));
    live.publish(event('1'));
    live.publish(event('3'));
    stop();
    live.publish(event('1'));
    assert.deepEqual(heard, ['a:1']);
    assert.equal(live.wants('1'), false);
    assert.equal(live.wants('2'), true);
  });

  test('sends nothing across processes while nobody elsewhere listens to the account', async () => {
    let now = 0;
    const { transport, sent, deliver } = fakeTransport();
    const live = createLiveEvents({ transport, announceMs: 1000, clock: () => now });
    await live.start();
    assert.deepEqual(sent.map((m) => m.kind), ['hello']);
    sent.length = 0;
    live.publish(event('7'));
    assert.equal(live.anyone(), false);
    assert.equal(sent.length, 0);

    deliver({ kind: 'interest', origin: 'other', uids: ['7'] });
    assert.equal(live.wants('7'), true);
    live.publish(event('7'));
    live.publish(event('8'));
    assert.deepEqual(sent.map((m) => (m.kind === 'event' ? m.event.accountUid : m.kind)), ['7']);

    // Forgotten three announcement periods after the last one.
    now = 3001;
    assert.equal(live.wants('7'), false);
    await live.close();
  });

  test('announces a newly listened account at once, answers hello, and ignores its own messages', async () => {
    const { transport, sent, deliver } = fakeTransport();
    const live = createLiveEvents({ transport });
    await live.start();
    const own = sent[0]!.origin;
    sent.length = 0;
    const heard: ServiceEvent[] = [];
    live.subscribe('5', (e) => heard.push(e));
    live.subscribe('5', () => undefined);
    assert.deepEqual(sent, [{ kind: 'interest', origin: own, uids: ['5'] }]);
    deliver({ kind: 'hello', origin: 'newcomer' });
    assert.equal(sent.length, 2);
    const remote = event('5');
    deliver({ kind: 'event', origin: 'other', event: remote });
    deliver({ kind: 'event', origin: own, event: event('5') });
    assert.deepEqual(heard, [remote]);
    await live.close();
  });

  test('a listener that throws does not keep the others from hearing', () => {
    const errors: unknown[] = [];
    const live = createLiveEvents({ onError: (e) => errors.push(e) });
    const heard: string[] = [];
    live.subscribe('1', () => {
      throw new Error('boom');
    });
    live.subscribe('1', (e) => heard.push(e.id));
    live.publish(event('1'));
    assert.equal(heard.length, 1);
    assert.equal(errors.length, 1);
  });
});

describe('PostgreSQL NOTIFY payloads', () => {
  test('a message over 8000 bytes goes in parts that reassemble in any order', () => {
    const text = JSON.stringify({ kind: 'event', data: 'ü€😀'.repeat(3000) });
    const parts = notifyPayloads(text);
    assert.ok(parts.length > 1);
    for (const part of parts) assert.ok(Buffer.byteLength(part) < 8000, `${Buffer.byteLength(part)} bytes`);
    const assemble = createPayloadAssembler();
    const answers = [...parts].reverse().map(assemble);
    assert.deepEqual(answers.slice(0, -1), new Array(parts.length - 1).fill(undefined));
    assert.equal(answers.at(-1), text);
  });

  test('a short message is sent as it is; a part seen twice is ignored', () => {
    assert.deepEqual(notifyPayloads('{"a":1}'), ['{"a":1}']);
    const assemble = createPayloadAssembler();
    assert.equal(assemble('{"a":1}'), '{"a":1}');
    const parts = notifyPayloads('x'.repeat(20_000));
    assert.equal(assemble(parts[0]!), undefined);
    assert.equal(assemble(parts[0]!), undefined);
    assert.equal(parts.slice(1).map(assemble).at(-1), 'x'.repeat(20_000));
  });

  test('each schema has its own channel', () => {
    assert.equal(channelFor('public'), NOTIFY_CHANNEL);
    assert.notEqual(channelFor('test_a'), channelFor('test_b'));
    assert.ok(channelFor('a'.repeat(200)).length < 64);
  });
});

describe('link.visited from a committed count batch', () => {
  const visit = { hour: 1, key: 'k', bot: false, referrer: '(direct)', country: 'ZZ', browser: 'Firefox', os: 'Linux', device: 'desktop' } as Visit;
  const row = (uid: number) => ({ shortCode: 'abcde', pointsTo: 'https://e.x/', createdBy: uid, accesses: 1 });

  test('one event per account per batch, at most 100 visits each, refused and unknown calls left out', async () => {
    const live = createLiveEvents();
    const heard: ServiceEvent[] = [];
    live.subscribe('1', (e) => heard.push(e));
    const publisher = createEventPublisher(live, () => new Date(0));
    const calls: BatchCall[] = [];
    const outcomes = [];
    for (let i = 0; i < 250; i++) {
      calls.push({ code: 'abcde', now: '2026-11-25T00:00:00.000Z', visit });
      outcomes.push({ row: row(1), accesses: i + 1 });
    }
    calls.push({ code: 'other', now: '2026-11-25T00:00:00.000Z', visit }, { code: 'gone1', now: '2026-11-25T00:00:00.000Z', visit: undefined });
    outcomes.push({ row: row(2), accesses: 1 }, { row: row(1), accesses: 9, refused: 'visit_limit' as const }, undefined);
    calls.push({ code: 'nolink', now: '2026-11-25T00:00:00.000Z', visit: undefined });
    publisher.countsCommitted(calls, outcomes);
    assert.equal(heard.length, 0, 'made after the batch\'s callers are answered');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(heard.map((e) => (e.data as { visits: unknown[] }).visits.length), [VISITS_PER_EVENT, VISITS_PER_EVENT, 50]);
    assert.ok(heard.every((e) => e.type === EventType.LinkVisited && e.accountUid === '1'));
    assert.deepEqual((heard[0]!.data as { visits: unknown[] }).visits[0], {
      ShortCode: 'abcde', Time: '2026-11-25T00:00:00.000Z', Bot: false, Referrer: '(direct)', Country: 'ZZ', Browser: 'Firefox', OperatingSystem: 'Linux', Device: 'desktop',
    });
  });

  test('nothing is scheduled when nobody listens', async () => {
    const live = createLiveEvents();
    const publisher = createEventPublisher(live, () => new Date(0));
    let scheduled = 0;
    const original = globalThis.setImmediate;
    globalThis.setImmediate = ((...args: Parameters<typeof setImmediate>) => {
      scheduled++;
      return original(...args);
    }) as typeof setImmediate;
    try {
      publisher.countsCommitted([{ code: 'abcde', now: 'x', visit }], [{ row: row(1), accesses: 1 }]);
    } finally {
      globalThis.setImmediate = original;
    }
    assert.equal(scheduled, 0);
  });
});
