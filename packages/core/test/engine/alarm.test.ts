import { Alarm, type EngineClock, systemEngineClock } from '@zoott/core/internal';
import { describe, expect, it } from 'vitest';

/** A clock whose time never passes: its sleeps end only when their signal aborts. */
const frozen: EngineClock = {
  now: () => 0,
  random: () => 0.5,
  sleep: (_ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      signal?.addEventListener('abort', () => resolve(), { once: true });
    }),
};

/** Whether `p` has settled once the event loop has turned (timers of 0 ms included). */
async function settledNow(p: Promise<void>): Promise<boolean> {
  let done = false;
  void p.then(() => {
    done = true;
  });
  await new Promise((r) => setTimeout(r, 5));
  return done;
}

// The worker's loop sleeps on an Alarm between claims; a watch, a completion or a signal
// wakes it. A wake-up lost between the loop's look at the world and its sleep would leave
// new work waiting a whole poll (or, on a clock that never moves, for ever).
describe.each([
  ['the system clock', systemEngineClock],
  ['a clock of its own', frozen],
])('Alarm on %s', (_name, clock) => {
  it('a wake-up ends the sleep in progress', async () => {
    const alarm = new Alarm(clock);
    const slept = alarm.sleep(60_000);
    expect(await settledNow(slept)).toBe(false);
    alarm.wake();
    expect(await settledNow(slept)).toBe(true);
  });

  it('a wake-up with no sleep in progress ends the next sleep at once, until re-armed', async () => {
    const alarm = new Alarm(clock);
    alarm.wake();
    expect(alarm.rung).toBe(true);
    expect(await settledNow(alarm.sleep(60_000))).toBe(true);
    expect(await settledNow(alarm.sleep(60_000))).toBe(true);
    alarm.rearm();
    expect(alarm.rung).toBe(false);
    const slept = alarm.sleep(60_000);
    expect(await settledNow(slept)).toBe(false);
    alarm.wake();
    expect(await settledNow(slept)).toBe(true);
  });

  it('a sleep begun while another is in progress ends that one', async () => {
    const alarm = new Alarm(clock);
    const first = alarm.sleep(60_000);
    const second = alarm.sleep(60_000);
    expect(await settledNow(first)).toBe(true);
    expect(await settledNow(second)).toBe(false);
    alarm.wake();
    expect(await settledNow(second)).toBe(true);
  });

  it('a sleep cut short leaves no timer behind to end a later one early', async () => {
    const alarm = new Alarm(clock);
    const first = alarm.sleep(20);
    alarm.wake();
    await first;
    alarm.rearm();
    const second = alarm.sleep(60_000);
    // The first sleep's 20 ms have passed: its timer, had it stayed, would end this one.
    await new Promise((r) => setTimeout(r, 40));
    expect(await settledNow(second)).toBe(false);
    alarm.wake();
    await second;
  });
});

describe('Alarm on the system clock', () => {
  it("a wake-up clears the sleep's timer (none is left to fire for nothing)", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const alarm = new Alarm(systemEngineClock);
    const before = timers();
    const slept = alarm.sleep(60_000);
    expect(timers()).toBe(before + 1);
    alarm.wake();
    await slept;
    expect(timers()).toBe(before);
  });

  it('a sleep ends on its own when its time is up', async () => {
    const alarm = new Alarm(systemEngineClock);
    const started = performance.now();
    await alarm.sleep(20);
    expect(performance.now() - started).toBeGreaterThanOrEqual(19);
  });
});

describe('Alarm on a clock that does not honour the signal', () => {
  it('the end of a sleep already cut short does not end the next one', async () => {
    // Its sleeps end only when the test says, signal or not, in the order they began.
    const ends: Array<() => void> = [];
    const deaf: EngineClock = {
      now: () => 0,
      random: () => 0.5,
      sleep: () => new Promise<void>((resolve) => ends.push(resolve)),
    };
    const alarm = new Alarm(deaf);
    const first = alarm.sleep(1000);
    alarm.wake();
    await first;
    alarm.rearm();
    const second = alarm.sleep(1000);
    // The first sleep's time is up only now, while the second one is in progress.
    ends[0]!();
    expect(await settledNow(second)).toBe(false);
    alarm.wake();
    expect(await settledNow(second)).toBe(true);
  });
});
