/** The chaos checker must object to every kind of broken history, and accept a good one. */
import { describe, expect, it } from 'vitest';
import {
  type ChaosHistory,
  chaosProblems,
  checkChaos,
  type ExecEvent,
} from './support/chaos-check.js';

const start = (key: string, exec: string, pid: number, time: number): ExecEvent => ({
  event: 'start',
  key,
  exec,
  pid,
  time,
});
const finish = (key: string, exec: string, pid: number, time: number): ExecEvent => ({
  event: 'finish',
  key,
  exec,
  pid,
  time,
});

/** r completes at 20, r|c at 40; worker 2 was killed while running r|c once. */
function good(): ChaosHistory {
  return {
    queued: ['r', 'r|c'],
    completed: [
      { key: 'r', ctime: 20, attempts: 1, exec: 'e1' },
      { key: 'r|c', ctime: 40, attempts: 2, exec: 'e3' },
    ],
    leftovers: { pending: [], working: [], failed: [] },
    events: [
      start('r', 'e1', 1, 10),
      finish('r', 'e1', 1, 19),
      start('r|c', 'e2', 2, 21),
      start('r|c', 'e3', 1, 30),
      finish('r|c', 'e3', 1, 39),
    ],
    faults: [{ kind: 'worker-kill', pid: 2, at: 25 }],
    liveProcesses: [],
    marginMs: 0,
  };
}

describe('chaos checker', () => {
  it('accepts a correct history and blames the extra run on the kill', () => {
    const v = checkChaos(good());
    expect(chaosProblems(v)).toEqual([]);
    expect(v.extraExecutions).toBe(1);
    expect(v.retriesByCause['worker-kill']).toBe(1);
    expect(v.engineRetries).toBe(1);
  });

  it('blames a run cut short by a split of the ensemble on the ensemble, and only within it', () => {
    const h = good();
    h.faults = [{ kind: 'split', member: 0, from: 22, to: 28 }];
    const v = checkChaos(h);
    expect(chaosProblems(v)).toEqual([]);
    expect(v.retriesByCause.ensemble).toBe(1);
    expect(v.faultsByKind.split).toBe(1);
    // A split that ended before the run began explains nothing.
    h.faults = [{ kind: 'split', member: 0, from: 1, to: 5 }];
    expect(checkChaos(h).unexplained).toEqual(['r|c e2']);
  });

  it('finds a lost task', () => {
    const h = good();
    h.completed = h.completed.filter((c) => c.key !== 'r|c');
    expect(checkChaos(h).lost).toEqual(['r|c']);
  });

  it('finds a task run again after it completed (duplicate)', () => {
    const h = good();
    h.events = [...h.events, start('r', 'e9', 3, 50)];
    h.faults = [...h.faults, { kind: 'worker-kill', pid: 3, at: 51 }];
    expect(checkChaos(h).duplicated).toEqual(['r']);
  });

  it('finds a child started before its ancestor completed', () => {
    const h = good();
    h.events = [...h.events, start('r|c', 'e0', 4, 15)];
    h.faults = [...h.faults, { kind: 'worker-kill', pid: 4, at: 16 }];
    expect(checkChaos(h).orderViolations).toEqual(['r|c <- r']);
  });

  it('finds leftovers, live processes and unexplained re-runs', () => {
    const h = good();
    h.faults = [];
    h.leftovers.working = ['r|c'];
    h.liveProcesses = [1234];
    const problems = chaosProblems(checkChaos(h));
    expect(problems.map((p) => p.split(':')[0])).toEqual([
      'working left',
      'live worker processes',
      'unexplained extra executions',
    ]);
  });
});
