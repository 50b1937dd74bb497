// The job keeper kills a job at its kill deadline on its own clock: the deadline the worker
// sends with each heartbeat (when its ZooKeeper session could start to expire), reached while
// the worker's event loop is frozen (no heartbeat, no timer, no kill of its own can run). A
// deadline that keeps moving (replies heard) kills nothing; the last one given still kills
// once it stops moving. Real processes, the real keeper; no silence limit, so only the
// deadline can kill.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isZoottError } from '@zoott/core';
import { killMarked, processesWith, until } from '@zoott/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type KillDeadline, monotonicMs, runRacer, runRegularJob } from '../../src/jobs/index.js';

const opts = { serverName: 'deadline-host', killGraceMs: 60_000 };
const marker = `0.000${process.pid}${Date.now() % 100_000}`;
const dir = mkdtempSync(join(tmpdir(), 'zoott-deadline-'));

/** Ignores SIGTERM; appends the wall time (ns) to `$0` every 50 ms, carrying `mark`. */
const ticking = (mark: string, marks: string) => [
  '-c',
  `trap '' TERM; while :; do date +%s%N >> "$0"; sleep 0.05 ${mark}; done`,
  marks,
];

/** The last wall time (ms) a ticking job wrote. */
function lastTick(marks: string): number {
  const lines = readFileSync(marks, 'utf8').trim().split('\n');
  return Number(BigInt(lines.at(-1)!) / 1_000_000n);
}

/** Blocks this process's event loop for `ms`: no timer, heartbeat or I/O callback runs. */
function freeze(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function unheard(err: unknown, atLeastMs: number): boolean {
  const m = /ZooKeeper was not heard from for (\d+) ms/.exec(String(err));
  return isZoottError(err, 'ABORTED') && m !== null && Number(m[1]) >= atLeastMs;
}

async function running(mark: string): Promise<void> {
  await until('the job to tick', () => (processesWith(mark).length > 0 ? true : undefined));
}

describe('the job keeper kills at the deadline on its own clock', { timeout: 60_000 }, () => {
  afterEach(() => killMarked(marker));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a job and a racer die at their deadline while the worker is frozen, and reject', async () => {
    const jobMarks = join(dir, 'job');
    const racerMarks = join(dir, 'racer');
    // Heard 700 ms ago for the keeper, dead 1.5 s from the freeze: a deadline that no longer
    // moves, as with a worker cut off whose loop then stalls.
    let deadline: { at: number; heardAt: number } | null = null;
    // Heartbeats that read the deadline, per job: each beat reads it just before it sends it.
    const carried = [0, 0];
    const given =
      (job: number): KillDeadline =>
      () => {
        if (deadline !== null) carried[job]!++;
        return deadline;
      };
    const job = runRegularJob(
      { executable: '/bin/sh', arguments: ticking(`${marker}1`, jobMarks) },
      { ...opts, deadline: given(0) },
    ).catch((e: unknown) => e);
    const racer = runRacer('/bin/sh', ticking(`${marker}2`, racerMarks), '', {
      ...opts,
      deadline: given(1),
    });
    const racerDone = racer.done.catch((e: unknown) => e);
    const racerOutcome = racer.outcome.catch((e: unknown) => e);
    await running(`${marker}1`);
    await running(`${marker}2`);
    const now = monotonicMs();
    deadline = { at: now + 1500, heardAt: now - 700 };
    // A heartbeat carries it to the keeper, then the loop stops: wait for a second beat to
    // read it, so the first one's write had a whole turn of the loop to go out.
    await until('two heartbeats to carry the deadline', () =>
      carried.every((n) => n >= 2) ? true : undefined,
    );
    const dueAt = Date.now() + (deadline.at - monotonicMs());
    freeze(4000);
    const frozenUntil = Date.now();
    // The keeper's SIGKILL landed by the deadline (the slack is its timer and the kill on a
    // loaded host), not when this process could act again, 2.5 s later.
    expect(lastTick(jobMarks) - dueAt).toBeLessThan(600);
    expect(lastTick(racerMarks) - dueAt).toBeLessThan(600);
    expect(frozenUntil - dueAt).toBeGreaterThan(2000);
    expect(unheard(await job, 2200), String(await job)).toBe(true);
    expect(unheard(await racerDone, 2200), String(await racerDone)).toBe(true);
    expect(unheard(await racerOutcome, 2200), String(await racerOutcome)).toBe(true);
    expect(processesWith(marker)).toEqual([]);
  });

  it('a deadline that keeps moving kills nothing; once it stops, the job dies at it', async () => {
    const marks = join(dir, 'moving');
    // A worker hearing its server: every heartbeat carries a deadline 2 s ahead (8 times the
    // heartbeat's 250 ms: room for this process's loop to run late on a loaded host).
    let moving = true;
    let last: { at: number; heardAt: number } | null = null;
    const given: KillDeadline = () => {
      if (moving) {
        const now = monotonicMs();
        last = { at: now + 2000, heardAt: now };
      }
      return last;
    };
    let ended = false;
    const job = runRegularJob(
      { executable: '/bin/sh', arguments: ticking(`${marker}3`, marks) },
      { ...opts, deadline: given },
    )
      .catch((e: unknown) => e)
      .finally(() => {
        ended = true;
      });
    await running(`${marker}3`);
    // Three times the distance to the deadline: each heartbeat moved it on.
    await new Promise((r) => setTimeout(r, 6000));
    expect(ended).toBe(false);
    expect(processesWith(`${marker}3`).length).toBeGreaterThan(0);
    moving = false;
    const stoppedAt = Date.now();
    expect(unheard(await job, 2000), String(await job)).toBe(true);
    expect(lastTick(marks) - stoppedAt).toBeLessThan(2000 + 600);
    expect(processesWith(marker)).toEqual([]);
  });
});
