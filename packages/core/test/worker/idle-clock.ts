import { type EngineClock, systemEngineClock } from '@zoott/core';
import { eventually } from '../engine/helpers.js';

/**
 * Real time, and a count of the worker loop's sleeps: each is one idle wait. The idle tests
 * wait on these counts (the loop's own rhythm), never on a fixed time.
 */
export class CountingClock implements EngineClock {
  sleeps = 0;
  now(): number {
    return systemEngineClock.now();
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps++;
    return systemEngineClock.sleep(ms, signal);
  }
  random(): number {
    return systemEngineClock.random();
  }
}

/** Waits until every clock has slept `periods` more times than it had when called. */
export async function idlePeriods(
  clocks: readonly { sleeps: number }[],
  periods: number,
): Promise<void> {
  const from = clocks.map((clock) => clock.sleeps);
  await eventually(() => clocks.every((clock, i) => clock.sleeps >= from[i]! + periods), 30_000);
}
