/**
 * The chaos run: real ZooKeeper ensemble, real worker daemons, real faults.
 * CI runs the short form; `ZOOTT_CHAOS_TASKS=5000` runs the long one (see docs/reliability.md).
 * `ZOOTT_CHAOS_REPORT=<file>` writes the verdict as JSON for the docs table.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chaosProblems, checkChaos, type FaultKind } from './support/chaos-check.js';
import { runChaos, WORKER_EXIT_UNREACHABLE } from './support/chaos-run.js';

const TASKS = Number(process.env.ZOOTT_CHAOS_TASKS ?? '600');
const LONG = TASKS > 1000;
const SESSION_TIMEOUT_MS = 4000;
const DEADLINE_MS = LONG ? 1_200_000 : 240_000;

describe('chaos: 4 worker daemons on a 3-server ensemble under faults', () => {
  it(
    `completes ${TASKS}+ tasks in trees of depth 3 exactly once, in order, with nothing left over`,
    async () => {
      const run = await runChaos({
        tasks: TASKS,
        // Long enough that the work outlasts one round of every fault kind.
        taskMs: LONG ? 150 : 500,
        workers: 4,
        concurrency: 4,
        sessionTimeoutMs: SESSION_TIMEOUT_MS,
        killEveryMs: 4000,
        cycles: LONG ? 'repeat' : 'once',
        deadlineMs: DEADLINE_MS,
        progress: process.env.ZOOTT_CHAOS_VERBOSE ? (l) => console.log(`[chaos] ${l}`) : undefined,
      });
      const verdict = checkChaos({ ...run.history, marginMs: 2 * SESSION_TIMEOUT_MS });
      const report = {
        ...verdict,
        lost: verdict.lost.length,
        duplicated: verdict.duplicated.length,
        orderViolations: verdict.orderViolations.length,
        unexplained: verdict.unexplained.length,
        durationMs: run.durationMs,
        heals: run.heals,
        unexpectedExits: run.unexpectedExits,
      };
      if (process.env.ZOOTT_CHAOS_REPORT)
        writeFileSync(process.env.ZOOTT_CHAOS_REPORT, `${JSON.stringify(report, null, 2)}\n`);
      console.log(`[chaos] ${JSON.stringify(report)}`);

      expect(chaosProblems(verdict)).toEqual([]);
      expect(verdict.tasks).toBeGreaterThanOrEqual(TASKS);
      expect(verdict.completions).toBe(verdict.tasks);
      // Every fault kind struck while work was still pending.
      for (const kind of [
        'worker-kill',
        'partition',
        'leader-stop',
        'follower-stop',
      ] as FaultKind[]) {
        const first = run.history.faults
          .filter((f) => f.kind === kind)
          .map((f) => (f.kind === 'worker-kill' ? f.at : f.from));
        expect(first.length, kind).toBeGreaterThan(0);
        expect(Math.min(...first), `${kind} before the work was done`).toBeLessThan(run.workDoneAt);
      }
      // No worker died on its own. One restarted into the partition may give up connecting
      // (exit 3 after its connect timeout, shorter than the partition): the run restarts it,
      // as a service manager would, and the check below proves it came back to work.
      for (const e of run.unexpectedExits)
        expect(e.code, `worker ${e.slot} (pid ${e.pid}) exited on its own`).toBe(
          WORKER_EXIT_UNREACHABLE,
        );
      // The partitioned worker came back after every partition: its session renewed (or its
      // process, restarted meanwhile, served again). The run waits for that after the last
      // heal, so this fails only for a worker that never comes back.
      for (const h of run.heals)
        expect(h.backAt, `back after the heal at ${h.healedAt}`).not.toBeNull();
      // Once back, it took part in the work: with four workers on balanced buckets, the others
      // starting 40 tasks while it starts none means it is out of the game. Counted from when
      // it was back, not from the heal: a renewal, or a restart by the run, is not work missed.
      for (const h of run.heals)
        if (h.othersStarted >= 40)
          expect(
            h.resumedAt,
            `resumed after being back at ${h.readyAt} (healed at ${h.healedAt}; the others started ${h.othersStarted} since, in a ${h.windowMs} ms window)`,
          ).not.toBeNull();
      // The retries are the faults' doing, and they add up.
      const blamed = Object.values(verdict.retriesByCause).reduce((a, b) => a + b, 0);
      expect(blamed).toBe(verdict.extraExecutions);
    },
    DEADLINE_MS + 180_000,
  );
});
