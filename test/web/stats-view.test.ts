/**
 * The statistics view's pure helpers, run in Node (they touch no page): the periods the
 * picker asks the API for, and the chart's value axis. The browser tests drive the same code
 * through the page, against the real API.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { axisScale, customPeriod, presetPeriod } from '../../src/web/stats-view.js';

const NOW = new Date('2026-11-25T19:42:13.500Z');

/** How many series entries the API answers for a period: intervals [from, to) touches. */
function entries({ from, to, interval }: { from: string; to: string; interval: 'hour' | 'day' | 'month' }): number {
  let n = 0;
  const end = Date.parse(to);
  for (let d = new Date(from); d.getTime() < end; n++) {
    if (interval === 'hour') d = new Date(d.getTime() + 3_600_000);
    else if (interval === 'day') d = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1));
    else d = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
  }
  return n;
}

describe('presetPeriod', () => {
  test('asks for whole UTC intervals, up to the end of the one now is in', () => {
    assert.deepEqual(presetPeriod('24h', NOW), { from: '2026-11-24T20:00:00.000Z', to: '2026-11-25T20:00:00.000Z', interval: 'hour' });
    assert.deepEqual(presetPeriod('7d', NOW), { from: '2026-11-19T00:00:00.000Z', to: '2026-11-26T00:00:00.000Z', interval: 'day' });
    assert.deepEqual(presetPeriod('30d', NOW), { from: '2026-10-27T00:00:00.000Z', to: '2026-11-26T00:00:00.000Z', interval: 'day' });
    assert.deepEqual(presetPeriod('12m', NOW), { from: '2025-12-01T00:00:00.000Z', to: '2026-12-01T00:00:00.000Z', interval: 'month' });
  });

  test('gives 24 hours, 7 days, 30 days and 12 months of entries, the last one running', () => {
    assert.deepEqual(['24h', '7d', '30d', '12m'].map((range) => entries(presetPeriod(range, NOW))), [24, 7, 30, 12]);
    // At the very start of an interval too, and across a year's end.
    const midnight = new Date('2027-01-01T00:00:00.000Z');
    assert.deepEqual(['24h', '7d', '30d', '12m'].map((range) => entries(presetPeriod(range, midnight))), [24, 7, 30, 12]);
    assert.equal(presetPeriod('12m', midnight).from, '2026-02-01T00:00:00.000Z');
  });

  test('falls back to the last 30 days for a range it does not know', () => {
    assert.deepEqual(presetPeriod('nonsense', NOW), presetPeriod('30d', NOW));
  });
});

describe('customPeriod', () => {
  test('takes UTC dates, both included', () => {
    assert.deepEqual(customPeriod('2026-11-01', '2026-11-30', 'day'), {
      from: '2026-11-01T00:00:00.000Z', to: '2026-12-01T00:00:00.000Z', interval: 'day',
    });
    assert.deepEqual(customPeriod('2026-11-25', '2026-11-25', 'hour'), {
      from: '2026-11-25T00:00:00.000Z', to: '2026-11-26T00:00:00.000Z', interval: 'hour',
    });
  });

  test('picks hours up to 3 days, days up to about a year, months beyond, for "best fit"', () => {
    const fit = (from: string, to: string) => {
      const period = customPeriod(from, to, 'auto');
      return typeof period === 'string' ? period : period.interval;
    };
    assert.equal(fit('2026-11-23', '2026-11-25'), 'hour');
    assert.equal(fit('2026-11-22', '2026-11-25'), 'day');
    assert.equal(fit('2025-11-26', '2026-11-25'), 'day');
    assert.equal(fit('2024-01-01', '2026-11-25'), 'month');
  });

  test('says why when there is no period', () => {
    assert.equal(customPeriod('', '2026-11-25', 'auto'), 'Choose both dates of the period.');
    assert.equal(customPeriod('2026-11-25', '', 'auto'), 'Choose both dates of the period.');
    assert.equal(customPeriod('not-a-date', '2026-11-25', 'auto'), 'Choose both dates of the period.');
    assert.equal(customPeriod('2026-11-26', '2026-11-25', 'auto'), 'The first date must not be after the second.');
  });
});

describe('axisScale', () => {
  test('tops the axis with a round number at or above the largest bar, in at most 4 steps', () => {
    assert.deepEqual(axisScale(0), { top: 4, step: 1 });
    assert.deepEqual(axisScale(1), { top: 1, step: 1 });
    assert.deepEqual(axisScale(5), { top: 6, step: 2 });
    assert.deepEqual(axisScale(7), { top: 8, step: 2 });
    assert.deepEqual(axisScale(10), { top: 10, step: 5 });
    assert.deepEqual(axisScale(95), { top: 100, step: 50 });
    assert.deepEqual(axisScale(1234), { top: 1500, step: 500 });
    for (const max of [1, 2, 3, 9, 17, 99, 101, 999, 12_345, 1_000_001]) {
      const { top, step } = axisScale(max);
      assert.ok(top >= max && top / step <= 4 && Number.isInteger(top / step), `${max}: ${top} in steps of ${step}`);
    }
  });
});
