// killJobsUnheard: every job and racer of this process SIGKILLed at once (one that ignores
// SIGTERM, with a minute of grace, too), and each such run rejects ABORTED naming ZooKeeper's
// silence: its end is the worker's doing, neither the job's result nor a racer's win.
import { isZoottError } from '@zoott/core';
import { processesWith, until } from '@zoott/testing';
import { describe, expect, it } from 'vitest';
import { killJobsUnheard, runRacer, runRegularJob } from '../../src/jobs/index.js';

const opts = { serverName: 'unheard-host', killGraceMs: 60_000 };
const marker = `0.000${process.pid}${Date.now() % 100_000}`;
const stubborn = (mark: string) => ['-c', `trap '' TERM; sleep 60 ${mark}`];

function unheard(err: unknown): boolean {
  return (
    isZoottError(err, 'ABORTED') && /ZooKeeper was not heard from for 1234 ms/.test(String(err))
  );
}

describe('killJobsUnheard', () => {
  it('a job and a racer end at once, and their runs reject', async () => {
    const job = runRegularJob(
      { executable: '/bin/sh', arguments: stubborn(`${marker}1`) },
      opts,
    ).catch((e: unknown) => e);
    const racer = runRacer('/bin/sh', stubborn(`${marker}2`), '', opts);
    const racerDone = racer.done.catch((e: unknown) => e);
    const racerOutcome = racer.outcome.catch((e: unknown) => e);
    await until('both to sleep', () =>
      processesWith(`60\0${marker}1`).length + processesWith(`60\0${marker}2`).length >= 2
        ? true
        : undefined,
    );
    expect(killJobsUnheard(1234)).toBe(2);
    expect(unheard(await job), JSON.stringify(await job)).toBe(true);
    expect(unheard(await racerDone), JSON.stringify(await racerDone)).toBe(true);
    expect(unheard(await racerOutcome), JSON.stringify(await racerOutcome)).toBe(true);
    expect(processesWith(marker)).toEqual([]);
  });
});
