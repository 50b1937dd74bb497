/**
 * The chaos run on a network of Linux network namespaces (zk-testkit's createNetwork): each
 * ensemble member and the cut-off worker on a host of their own. Besides the SIGKILLs and
 * the member stops, a partition takes the worker's link down while its job runs, and a split
 * cuts the leader off its peers and its clients (the ensemble split 2/1). Needs root and
 * iproute2 (`pnpm test` runs as root in CI); without them it fails, saying so.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chaosProblems, checkChaos } from './support/chaos-check.js';
import { runChaos, WORKER_EXIT_UNREACHABLE } from './support/chaos-run.js';

const TASKS = Number(process.env.ZOOTT_NETNS_CHAOS_TASKS ?? '600');
const SESSION_TIMEOUT_MS = 4000;
const DEADLINE_MS = 240_000;

describe('chaos on a namespace network: a worker partitioned while its job runs, the ensemble split 2/1', () => {
  it(
    `completes ${TASKS}+ tasks exactly once, in order, with nothing left over`,
    async () => {
      const run = await runChaos({
        tasks: TASKS,
        taskMs: 500,
        workers: 4,
        concurrency: 4,
        sessionTimeoutMs: SESSION_TIMEOUT_MS,
        killEveryMs: 6000,
        cycles: 'once',
        deadlineMs: DEADLINE_MS,
        network: 'netns',
        progress: process.env.ZOOTT_CHAOS_VERBOSE ? (l) => console.log(`[netns] ${l}`) : undefined,
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
      console.log(`[netns chaos] ${JSON.stringify(report)}`);

      expect(chaosProblems(verdict)).toEqual([]);
      expect(verdict.lost).toEqual([]);
      expect(verdict.duplicated).toEqual([]);
      expect(verdict.orderViolations).toEqual([]);
      expect(verdict.completions).toBe(verdict.tasks);
      const { faults } = run.history;
      // Both network faults struck while work was still pending; the partition caught the
      // worker with a job running.
      for (const kind of ['partition', 'split'] as const) {
        const hits = faults.filter((f) => f.kind === kind);
        expect(hits.length, kind).toBeGreaterThan(0);
        const first = Math.min(...hits.map((f) => ('from' in f ? f.from : 0)));
        expect(first, `${kind} before the work was done`).toBeLessThan(run.workDoneAt);
      }
      for (const f of faults)
        if (f.kind === 'partition') expect(f.running, 'a job running').toBe(true);
      for (const e of run.unexpectedExits)
        expect(e.code, `worker ${e.slot} (pid ${e.pid}) exited on its own`).toBe(
          WORKER_EXIT_UNREACHABLE,
        );
      for (const h of run.heals)
        expect(h.backAt, `back after the heal at ${h.healedAt}`).not.toBeNull();
      const blamed = Object.values(verdict.retriesByCause).reduce((a, b) => a + b, 0);
      expect(blamed).toBe(verdict.extraExecutions);
    },
    DEADLINE_MS + 180_000,
  );
});
