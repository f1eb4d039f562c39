/**
 * The request log's specialised `request completed` line (src/http/request-log.ts) is the
 * line pino itself writes for the same call, byte for byte apart from the clock, so log
 * readers see no difference; with a logger set up in a way it does not reproduce, pino writes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { writeCompletedLine } from '../../src/http/request-log.ts';

function capture(options: pino.LoggerOptions = {}): { log: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const log = pino({ level: 'info', ...options }, { write: (line: string) => void lines.push(line) });
  return { log, lines };
}
const withoutTime = (line: string) => line.replace(/,"time":\d+/, ',"time":0');

test('writes what pino writes for the same fields, escaping included', () => {
  const cases = [
    ['GET', '/abc', 302, 0.52, '127.0.0.1', 'autocannon'],
    ['HEAD', '/v1/get/x?q="a\\b"\n\u2028', 404, 12, '::1', undefined],
    ['GET', '/é/%20', 503, 1234.5, undefined, 'Mozilla/5.0 "quoted" \u0000\t'],
  ] as const;
  for (const [method, url, statusCode, responseTime, remoteAddress, userAgent] of cases) {
    const viaPino = capture();
    viaPino.log.child({ reqId: 'r-1"x' }).info({ method, url, statusCode, responseTime, remoteAddress, userAgent }, 'request completed');
    const direct = capture();
    assert.equal(writeCompletedLine(direct.log.child({ reqId: 'r-1"x' }) as unknown as FastifyBaseLogger, method, url, statusCode, responseTime, remoteAddress, userAgent), true);
    assert.equal(direct.lines.length, 1);
    assert.equal(withoutTime(direct.lines[0]!), withoutTime(viaPino.lines[0]!));
    assert.ok(JSON.parse(direct.lines[0]!));
  }
});

test('writes nothing below info, and leaves loggers it cannot reproduce to pino', () => {
  const quiet = capture({ level: 'warn' });
  assert.equal(writeCompletedLine(quiet.log as unknown as FastifyBaseLogger, 'GET', '/', 200, 1, '::1', undefined), true);
  assert.deepEqual(quiet.lines, []);
  const formatted = capture({ formatters: { log: (object) => ({ ...object, extra: 1 }) } });
  assert.equal(writeCompletedLine(formatted.log as unknown as FastifyBaseLogger, 'GET', '/', 200, 1, '::1', undefined), false);
  const renamed = capture({ messageKey: 'message' });
  assert.equal(writeCompletedLine(renamed.log as unknown as FastifyBaseLogger, 'GET', '/', 200, 1, '::1', undefined), false);
  assert.deepEqual([...formatted.lines, ...renamed.lines], []);
});
