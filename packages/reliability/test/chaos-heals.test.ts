/** The chaos run's judgement of the partitioned worker after a heal, on made-up histories. */
import { describe, expect, it } from 'vitest';
import type { ExecEvent, Fault } from './support/chaos-check.js';
import { healsOf, type Readiness, readinessIn } from './support/chaos-heals.js';

const SLOT = 9;
const start = (pid: number, time: number): ExecEvent => ({
  event: 'start',
  key: `k${time}`,
  exec: `e${pid}-${time}`,
  pid,
  time,
});
/** `n` starts by another worker (pid 1), one per ms from `from`. */
const othersFrom = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => start(1, from + i));
const partition: Fault = { kind: 'partition', pid: SLOT, from: 0, to: 1000 };

function heal(
  events: ExecEvent[],
  ready: Readiness[],
  faults: Fault[] = [],
  slotPids = [SLOT, SLOT + 1],
) {
  const [h] = healsOf({
    faults: [partition, ...faults],
    events,
    ready,
    slotPids: new Set(slotPids),
    workDoneAt: 5000,
  });
  return h!;
}

describe('chaos: the partitioned worker after a heal', () => {
  it('counts the others from when it was back, not from the heal', () => {
    // Restarted meanwhile: 60 starts by the others before it serves again, then 5.
    const h = heal(
      [...othersFrom(1001, 60), ...othersFrom(3000, 5), start(SLOT + 1, 3100)],
      [{ pid: SLOT + 1, time: 2900 }],
    );
    expect(h).toMatchObject({ readyAt: 2900, backAt: 2900, resumedAt: 3100, othersStarted: 5 });
  });

  it('a worker back and idle while the others start 40 is out of the game', () => {
    const h = heal(othersFrom(1100, 45), [{ pid: SLOT, time: 1050 }]);
    expect(h).toMatchObject({ readyAt: 1050, resumedAt: null, othersStarted: 45 });
  });

  it('stops counting at its first start', () => {
    const h = heal(
      [...othersFrom(1100, 10), start(SLOT, 1200), ...othersFrom(1300, 50)],
      [{ pid: SLOT, time: 1050 }],
    );
    expect(h).toMatchObject({ resumedAt: 1200, othersStarted: 10 });
  });

  it('a process killed before its first start is judged by its replacement', () => {
    const h = heal(
      [...othersFrom(1100, 30), ...othersFrom(2100, 30), start(SLOT + 1, 2500)],
      [
        { pid: SLOT, time: 1050 },
        { pid: SLOT + 1, time: 2000 },
      ],
      [{ kind: 'worker-kill', pid: SLOT, at: 1500 }],
    );
    expect(h).toMatchObject({ readyAt: 2000, resumedAt: 2500, othersStarted: 30 });
  });

  it('not back before the window ended: nothing judged there, but when it was back is kept', () => {
    const h = heal(othersFrom(1100, 80), [{ pid: SLOT, time: 6000 }]);
    expect(h).toMatchObject({ readyAt: null, backAt: 6000, othersStarted: 0, windowMs: 4000 });
    expect(heal(othersFrom(1100, 80), []).backAt).toBeNull();
  });

  it('reads when a daemon was back from its JSON log', () => {
    const log = [
      '{"level":40,"time":10,"pid":5,"event":"suspended","msg":"session suspended"}',
      '{"level":40,"time":20,"pid":5,"event":"lost","msg":"session lost"}',
      '{"level":30,"time":30,"pid":5,"event":"connected","msg":"session connected"}',
      '{"level":30,"time":35,"pid":5,"event":"reconnected","msg":"session reconnected"}',
      'zoott-worker: CONNECTION_LOSS: could not connect (connect)',
      '{"level":30,"time":40,"pid":6,"msg":"worker started"}',
      '{"level":30,"time":50,"pid":6,"msg":"task started"}',
      '{"truncated',
    ].join('\n');
    expect(readinessIn(log)).toEqual([
      { pid: 5, time: 30 },
      { pid: 5, time: 35 },
      { pid: 6, time: 40 },
    ]);
  });
});
