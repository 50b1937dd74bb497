// A job that writes its own start, tick and end marks, so a test can tell from the marks alone
// whether two runs of it ever overlapped: the re-run of a job whose worker died or stopped
// must start after the last sign of life of the first run, a descendant's included.
import { readFileSync } from 'node:fs';
import { processesWith, until } from '@zoott/testing';
import { expect } from 'vitest';

/**
 * `sh -c MARKING_JOB <marks file> <marker> <ticks>`: marks `start`, starts a descendant in a
 * session of its own (setsid) that ticks until it is killed, ticks `<ticks>` times itself
 * (every 0.1 s), then marks `end`. Every line names the run (the leader's pid) and the time in
 * ns. `<marker>` is a number every process of the job carries in its command line (`sleep`
 * adds it to its duration), for `processesWith`.
 */
export const MARKING_JOB = [
  'm=$0 k=$1 n=$2',
  'echo "start $$ $(date +%s%N)" >> "$m"',
  `setsid sh -c 'while :; do echo "tick $1 $(date +%s%N)" >> "$0"; sleep 0.1 $2; done' "$m" "$$" "$k" &`,
  'i=0',
  'while [ "$i" -lt "$n" ]; do echo "tick $$ $(date +%s%N)" >> "$m"; sleep 0.1 "$k"; i=$((i+1)); done',
  'echo "end $$ $(date +%s%N)" >> "$m"',
].join('\n');

/** The job JSON of a marking job. */
export function markingJob(marks: string, marker: string, ticks: number) {
  return { executable: '/bin/sh', arguments: ['-c', MARKING_JOB, marks, marker, String(ticks)] };
}

/** One run of a marking job: its leader's pid, its start, its last mark, whether it ended. */
export interface MarkedRun {
  pid: number;
  start: bigint;
  last: bigint;
  ended: boolean;
}

/** The runs in a marks file, in the order they started. */
export function runsOf(marks: string): MarkedRun[] {
  const runs = new Map<number, MarkedRun>();
  for (const line of readFileSync(marks, 'utf8').split('\n')) {
    const [kind, pid, at] = line.split(' ');
    if (!kind || !pid || !at) continue;
    const t = BigInt(at);
    const run = runs.get(Number(pid)) ?? { pid: Number(pid), start: t, last: t, ended: false };
    if (kind === 'start') run.start = t;
    if (t > run.last) run.last = t;
    if (kind === 'end') run.ended = true;
    runs.set(run.pid, run);
  }
  return [...runs.values()].sort((a, b) => (a.start < b.start ? -1 : 1));
}

/** Fails unless every run's last mark came before the next run's start. */
export function expectNoOverlap(runs: readonly MarkedRun[]): void {
  for (let i = 1; i < runs.length; i++) {
    const gapMs = Number(runs[i]!.start - runs[i - 1]!.last) / 1e6;
    expect(
      gapMs,
      `run ${runs[i - 1]!.pid} still marked ${-gapMs} ms into run ${runs[i]!.pid}`,
    ).toBeGreaterThan(0);
  }
}

/** Waits until the first run of a marking job carrying `marker` ticks, its setsid descendant too. */
export async function firstRunTicking(marks: string, marker: string): Promise<void> {
  await until('the job and its setsid descendant to run', () =>
    processesWith(marker).length >= 2 && runsOf(marks).length === 1 ? true : undefined,
  );
}
