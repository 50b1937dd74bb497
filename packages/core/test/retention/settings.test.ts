import { DEFAULT_RETENTION, parseCount, parseDuration } from '@zoott/core';
import {
  chooseVictims,
  formatKeepDuration,
  type Indexed,
  mergeRetention,
  settingsWorld,
} from '@zoott/core/internal';
import { describe, expect, it } from 'vitest';

describe('retention settings', () => {
  it('parses durations as people write them', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration(' 7D ')).toBe(7 * 86_400_000);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('forever')).toBeNull();
  });

  it('refuses what is not a duration, naming the field', () => {
    expect(() => parseDuration('24', '--completed')).toThrow(/--completed: "24" is not a duration/);
    expect(() => parseDuration('1h junk')).toThrow(/is not a duration/);
    expect(() => parseDuration('')).toThrow(/is not a duration/);
    expect(() => parseDuration('0s')).toThrow(/longer than zero/);
    expect(() => parseDuration('200y')).toThrow(/is not a duration/);
    expect(() => parseDuration('99999w')).toThrow(/100 years/);
  });

  it('parses counts with separators, or unlimited', () => {
    expect(parseCount('100_000')).toBe(100_000);
    expect(parseCount('1,000')).toBe(1000);
    expect(parseCount('0')).toBe(0);
    expect(parseCount('unlimited')).toBeNull();
    expect(() => parseCount('-1', '--max-failed')).toThrow(/--max-failed: "-1" is not a count/);
    expect(() => parseCount('1.5')).toThrow(/is not a count/);
    expect(() => parseCount('2000000000')).toThrow(/unlimited/);
  });

  it('spells durations back exactly', () => {
    expect(formatKeepDuration(86_400_000)).toBe('24h');
    expect(formatKeepDuration(3_600_000)).toBe('1h');
    expect(formatKeepDuration(7 * 86_400_000)).toBe('7d');
    expect(formatKeepDuration(14 * 86_400_000)).toBe('2w');
    expect(formatKeepDuration(1500)).toBe('1500ms');
    expect(formatKeepDuration(null)).toBe('forever');
  });

  it('merges a patch into stored settings, checking every field', () => {
    const merged = mergeRetention(DEFAULT_RETENTION, { completed: { maxCount: 5 } });
    expect(merged.completed).toEqual({
      maxAgeMs: DEFAULT_RETENTION.completed.maxAgeMs,
      maxCount: 5,
    });
    expect(merged.results).toEqual(DEFAULT_RETENTION.results);
    expect(() => mergeRetention(DEFAULT_RETENTION, { completed: { maxAgeMs: 0 } })).toThrow(
      /retention.completed.maxAgeMs: 0/,
    );
    expect(() => mergeRetention(DEFAULT_RETENTION, { completed: { keep: 1 } })).toThrow(
      /retention.completed.keep: unknown setting/,
    );
    expect(() => mergeRetention(DEFAULT_RETENTION, { everything: {} })).toThrow(/unknown setting/);
    expect(() => mergeRetention(DEFAULT_RETENTION, { failed: { warnCount: -1 } })).toThrow(
      /failed.warnCount/,
    );
  });

  it('keeps the defaults bounded', () => {
    for (const k of [DEFAULT_RETENTION.completed, DEFAULT_RETENTION.results]) {
      expect(k.maxAgeMs).not.toBeNull();
      expect(k.maxCount).not.toBeNull();
    }
  });

  it('reads an internal world’s settings from its user world', () => {
    expect(settingsWorld('files~races')).toBe('files');
    expect(settingsWorld('files')).toBe('files');
  });
});

describe('choosing what goes', () => {
  const at = (name: string, seenAt: number, zxid: number): Indexed => ({
    dir: '/d',
    name,
    seenAt,
    zxid,
  });
  const entries = [at('c', 30, 3), at('a', 10, 1), at('b', 10, 2), at('d', 40, 4)];

  it('takes the oldest beyond the count, then everything past the age, oldest first', () => {
    const names = (v: Indexed[]) => v.map((e) => e.name);
    expect(names(chooseVictims(entries, 100, { maxAgeMs: null, maxCount: 2 }, 10))).toEqual([
      'a',
      'b',
    ]);
    expect(names(chooseVictims(entries, 100, { maxAgeMs: 65, maxCount: null }, 10))).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(names(chooseVictims(entries, 100, { maxAgeMs: 65, maxCount: 1 }, 10))).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(names(chooseVictims(entries, 100, { maxAgeMs: 65, maxCount: 1 }, 2))).toEqual([
      'a',
      'b',
    ]);
    expect(chooseVictims(entries, 100, { maxAgeMs: 1000, maxCount: 4 }, 10)).toEqual([]);
    expect(chooseVictims(entries, 100, { maxAgeMs: null, maxCount: null }, 10)).toEqual([]);
  });
});
