/** Repeated failures are logged once per cause per interval, with a count of those held back. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DomainError, ErrorCode } from '../../src/errors.ts';
import { causeOf, createSpacedLog } from '../../src/http/spaced-log.ts';

describe('createSpacedLog', () => {
  test('writes the first line of a cause, holds back repeats for the interval, then says how many it held', () => {
    let now = 0;
    const log = createSpacedLog({ intervalMs: 10_000, now: () => now });
    const written: Array<[string, number]> = [];
    const report = (cause: string) => log.report(cause, (suppressed) => written.push([cause, suppressed]));
    report('a');
    for (let i = 0; i < 5; i++) report('a');
    report('b');
    now = 9_999;
    report('a');
    assert.deepEqual(written, [['a', 0], ['b', 0]]);
    now = 10_000;
    report('a');
    report('a');
    assert.deepEqual(written, [['a', 0], ['b', 0], ['a', 6]]);
  });

  test('remembers a bounded number of causes', () => {
    const log = createSpacedLog({ now: () => 0, maxCauses: 2 });
    const written: string[] = [];
    for (const cause of ['a', 'b', 'c', 'a']) log.report(cause, () => written.push(cause));
    assert.deepEqual(written, ['a', 'b', 'c', 'a'], '"a" was forgotten when "c" came');
  });
});

describe('causeOf', () => {
  test('tells failures apart by their driver cause, not by their stack', () => {
    const outage = (code: string) => {
      const cause = Object.assign(new Error(`connect ${code}`), { code });
      return new DomainError(ErrorCode.StorageUnavailable, 'storage unavailable', { cause });
    };
    assert.equal(causeOf(outage('ECONNREFUSED')), causeOf(outage('ECONNREFUSED')));
    assert.notEqual(causeOf(outage('ECONNREFUSED')), causeOf(outage('ETIMEDOUT')));
  });
});
