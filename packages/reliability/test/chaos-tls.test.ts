/**
 * The chaos run over TLS: the same ensemble faults and worker kills, every client on the
 * members' secureClientPort (reconnects, session renewals and the partitioned worker's
 * proxies all through TLS). Shorter than the plain run: what it adds is the transport.
 */
import { describe, expect, it } from 'vitest';
import { chaosProblems, checkChaos, type FaultKind } from './support/chaos-check.js';
import { runChaos, WORKER_EXIT_UNREACHABLE } from './support/chaos-run.js';

const TASKS = Number(process.env.ZOOTT_CHAOS_TLS_TASKS ?? '300');
const SESSION_TIMEOUT_MS = 4000;
const DEADLINE_MS = 240_000;

describe('chaos over TLS: 4 worker daemons on a 3-server TLS ensemble under faults', () => {
  it(
    `completes ${TASKS}+ tasks exactly once through a leader kill, worker SIGKILLs and a partition`,
    async () => {
      const run = await runChaos({
        tasks: TASKS,
        taskMs: 500,
        workers: 4,
        concurrency: 4,
        sessionTimeoutMs: SESSION_TIMEOUT_MS,
        killEveryMs: 4000,
        cycles: 'once',
        deadlineMs: DEADLINE_MS,
        tls: true,
        progress: process.env.ZOOTT_CHAOS_VERBOSE
          ? (l) => console.log(`[chaos-tls] ${l}`)
          : undefined,
      });
      const verdict = checkChaos({ ...run.history, marginMs: 2 * SESSION_TIMEOUT_MS });
      console.log(
        `[chaos-tls] ${JSON.stringify({ ...verdict, lost: verdict.lost.length, duplicated: verdict.duplicated.length, durationMs: run.durationMs })}`,
      );
      expect(chaosProblems(verdict)).toEqual([]);
      expect(verdict.lost).toEqual([]);
      expect(verdict.duplicated).toEqual([]);
      expect(verdict.tasks).toBeGreaterThanOrEqual(TASKS);
      expect(verdict.completions).toBe(verdict.tasks);
      // The leader was killed and workers were SIGKILLed while work was still pending.
      for (const kind of ['worker-kill', 'leader-stop'] as FaultKind[]) {
        const first = run.history.faults
          .filter((f) => f.kind === kind)
          .map((f) => (f.kind === 'worker-kill' ? f.at : f.from));
        expect(first.length, kind).toBeGreaterThan(0);
        expect(Math.min(...first), `${kind} before the work was done`).toBeLessThan(run.workDoneAt);
      }
      for (const e of run.unexpectedExits)
        expect(e.code, `worker ${e.slot} (pid ${e.pid}) exited on its own`).toBe(
          WORKER_EXIT_UNREACHABLE,
        );
      for (const h of run.heals)
        expect(h.backAt, `back after the heal at ${h.healedAt}`).not.toBeNull();
    },
    DEADLINE_MS + 180_000,
  );
});
