import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/index.js';

describe('ManualClock', () => {
  it('starts where told and only moves on advance', () => {
    const clock = new ManualClock(1_000);
    expect(clock.now()).toBe(1_000);
    clock.advance(250);
    expect(clock.now()).toBe(1_250);
  });

  it('runs due timers in due order, ties in the order they were set, each at its due time', () => {
    const clock = new ManualClock();
    const log: string[] = [];
    clock.setTimeout(() => log.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => log.push(`a@${clock.now()}`), 10);
    clock.setTimeout(() => log.push(`c@${clock.now()}`), 20);
    clock.setTimeout(() => log.push(`late@${clock.now()}`), 31);
    clock.advance(30);
    expect(log).toEqual(['a@10', 'b@20', 'c@20']);
    expect(clock.now()).toBe(30);
    expect(clock.pendingTimers).toBe(1);
  });

  it('runs timers set by timers when they fall due within the same advance', () => {
    const clock = new ManualClock();
    const log: number[] = [];
    clock.setTimeout(() => {
      log.push(clock.now());
      clock.setTimeout(() => log.push(clock.now()), 5);
    }, 5);
    clock.advance(10);
    expect(log).toEqual([5, 10]);
  });

  it('clearTimeout cancels a timer', () => {
    const clock = new ManualClock();
    let ran = false;
    const handle = clock.setTimeout(() => {
      ran = true;
    }, 1);
    clock.clearTimeout(handle);
    clock.advance(5);
    expect(ran).toBe(false);
  });

  it('rejects going backwards', () => {
    expect(() => new ManualClock().advance(-1)).toThrow(RangeError);
  });
});
