import { isZoottError, nextTick, tickTaskName, validateSchedule } from '@zoott/core';
import { describe, expect, it } from 'vitest';

const errorOf = (input: unknown): unknown => {
  try {
    validateSchedule(input);
  } catch (err) {
    return err;
  }
  return null;
};

describe('validateSchedule', () => {
  it('accepts a cron expression with a time zone and keeps the data', () => {
    expect(
      validateSchedule({
        name: 'nightly',
        cron: '0 2 * * *',
        tz: 'Europe/Amsterdam',
        type: 'report',
        data: { full: true },
      }),
    ).toEqual({
      name: 'nightly',
      cron: '0 2 * * *',
      tz: 'Europe/Amsterdam',
      type: 'report',
      data: { full: true },
    });
  });

  it.each([
    [{ name: 'a', cron: '61 * * * *', type: 't' }, 'cron', /minute: 61/],
    [{ name: 'a', cron: '* * * *', type: 't' }, 'cron', /five, six, or seven/],
    [{ name: 'a', cron: '', type: 't' }, 'cron', /cron expression/],
    [{ name: 'a', cron: '* * * * *', tz: 'Mars/Base', type: 't' }, 'tz', /Mars\/Base/],
    [{ name: 'a/b', cron: '* * * * *', type: 't' }, 'name', /'\/'/],
    [{ name: 'a', cron: '* * * * *', type: '' }, 'type', /task type/],
    [{ name: 'a', cron: '* * * * *', type: 't', every: 5 }, 'every', /unknown/],
  ])('refuses %j naming the field', (input, field, message) => {
    const err = errorOf(input);
    expect(isZoottError(err, 'INVALID_CONFIG')).toBe(true);
    expect((err as { field?: string }).field).toBe(field);
    expect(String(err)).toMatch(message);
  });
});

describe('ticks', () => {
  it('follow the time zone across a daylight saving change', () => {
    // 02:30 in Amsterdam: on 2026-03-29 the clocks jump from 02:00 to 03:00.
    const spec = { cron: '30 3 * * *', tz: 'Europe/Amsterdam' };
    const before = Date.parse('2026-03-28T12:00:00Z');
    const first = nextTick(spec, before)!;
    expect(new Date(first).toISOString()).toBe('2026-03-29T01:30:00.000Z'); // 03:30 CEST
    expect(new Date(nextTick(spec, first)!).toISOString()).toBe('2026-03-30T01:30:00.000Z');
    expect(new Date(nextTick({ cron: '30 3 * * *' }, before)!).toISOString()).toBe(
      '2026-03-29T03:30:00.000Z',
    );
  });

  it('name their task after the schedule and the tick time (UTC, to the second)', () => {
    expect(tickTaskName('nightly', Date.parse('2026-03-26T02:00:05.000Z'))).toBe(
      'nightly-20260326T020005Z',
    );
  });
});
