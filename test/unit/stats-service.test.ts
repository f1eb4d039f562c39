import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DomainError } from '../../src/errors.ts';
import { intervalStarts, present, topValues } from '../../src/stats/stats-service.ts';
import { parseTimestamp } from '../../src/stats/timestamp.ts';

const iso = (ms: number) => new Date(ms).toISOString();

describe('statistics timestamps', () => {
  test('reads RFC 3339 with Z or an offset, the offset applied', () => {
    assert.equal(parseTimestamp('2026-11-01T00:00:00Z', 'from').toISOString(), '2026-11-01T00:00:00.000Z');
    assert.equal(parseTimestamp('2026-11-01T00:00:00.25+01:30', 'from').toISOString(), '2026-10-31T22:30:00.250Z');
    assert.equal(parseTimestamp('2026-03-29T03:30:00+02:00', 'from').toISOString(), '2026-03-29T01:30:00.000Z');
    assert.equal(parseTimestamp('2026-11-01t05:00:00-05:00', 'to').toISOString(), '2026-11-01T10:00:00.000Z');
    // An unescaped "+" arrives as a space.
    assert.equal(parseTimestamp('2026-11-01T00:00:00 02:00', 'from').toISOString(), '2026-10-31T22:00:00.000Z');
  });

  test('refuses a bare date, a time without offset, and dates that do not exist', () => {
    for (const raw of ['2026-11-01', '2026-11-01T00:00:00', '2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', '2026-11-01T24:00:00Z',
      '2026-11-01T00:00:60Z', '2026-11-01T00:00:00+25:00', 'yesterday', '1700000000']) {
      assert.throws(() => parseTimestamp(raw, 'from'), (error: unknown) => error instanceof DomainError && error.message.includes('"from"'), raw);
    }
  });
});

describe('statistics series', () => {
  test('one entry per UTC interval the period touches', () => {
    const from = new Date('2026-10-25T00:30:00+02:00'); // a DST change in Europe: no effect on UTC intervals
    const to = new Date('2026-10-25T04:00:00+01:00');
    assert.deepEqual(intervalStarts(from, to, 'hour').map(iso), [
      '2026-10-24T22:00:00.000Z', '2026-10-24T23:00:00.000Z', '2026-10-25T00:00:00.000Z', '2026-10-25T01:00:00.000Z', '2026-10-25T02:00:00.000Z',
    ]);
    assert.deepEqual(intervalStarts(from, to, 'day').map(iso), ['2026-10-24T00:00:00.000Z', '2026-10-25T00:00:00.000Z']);
    assert.deepEqual(intervalStarts(new Date('2024-01-31T12:00:00Z'), new Date('2024-03-01T00:00:00Z'), 'month').map(iso),
      ['2024-01-01T00:00:00.000Z', '2024-02-01T00:00:00.000Z']);
  });

  test('zero-fills the series and puts each hour in its interval; the totals add up', () => {
    const from = new Date('2026-11-01T00:00:00Z');
    const to = new Date('2026-11-04T00:00:00Z');
    const hour = (text: string) => Date.parse(text) / 3_600_000;
    const statistics = present(
      {
        series: [{ hour: hour('2026-11-01T05:00:00Z'), visits: 3, bots: 1 }, { hour: hour('2026-11-03T23:00:00Z'), visits: 2, bots: 2 }],
        values: [{ dimension: 1, value: '(direct)', visits: 5 }, { dimension: 5, value: 'bot', visits: 3 }, { dimension: 5, value: 'desktop', visits: 2 }],
      },
      { shortCode: 'abcde', from, to, interval: 'day', starts: intervalStarts(from, to, 'day') },
    );
    assert.deepEqual(statistics.series.map((p) => [iso(p.time.getTime()), p.visits, p.bots]), [
      ['2026-11-01T00:00:00.000Z', 3, 1], ['2026-11-02T00:00:00.000Z', 0, 0], ['2026-11-03T00:00:00.000Z', 2, 2],
    ]);
    assert.deepEqual([statistics.visits, statistics.humans, statistics.bots], [5, 2, 3]);
    assert.deepEqual(statistics.devices, [{ name: 'bot', visits: 3 }, { name: 'desktop', visits: 2 }]);
    assert.deepEqual(statistics.countries, []);
  });

  test('top lists: at most 50 by visits (ties by name), then the rest and stored (other) as one (other)', () => {
    const values = Array.from({ length: 60 }, (_, i) => ({ name: `v${String(i).padStart(2, '0')}`, visits: i < 5 ? 10 : 1 }));
    const list = topValues([...values, { name: '(other)', visits: 7 }]);
    assert.equal(list.length, 51);
    assert.deepEqual(list.slice(0, 6).map((v) => v.name), ['v00', 'v01', 'v02', 'v03', 'v04', 'v05']);
    assert.deepEqual(list.at(-1), { name: '(other)', visits: 10 + 7 });
    assert.equal(list.reduce((sum, v) => sum + v.visits, 0), 50 + 55 + 7);
    assert.deepEqual(topValues([{ name: 'a', visits: 1 }]), [{ name: 'a', visits: 1 }]);
  });
});
