/**
 * A fleet of idle workers under a trickle of tasks, on a real ZooKeeper. Most workers of a busy
 * world have nothing to do: they send nothing, and hear of every task through their watches.
 * The server expires a session one timeout after it last heard from the client, so a worker
 * whose keep-alive waits for a quiet socket lost its session to the notifications, and its
 * re-registration moved buckets under everyone else. Every session must live through it.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createEngine } from '@zoott/core';
import { describe, expect, it } from 'vitest';
import { until, zkNamespace } from './support/zk.js';

const FLEET = fileURLToPath(new URL('./support/idle-fleet.mjs', import.meta.url));
const PROCESSES = 4;
const LOOPS_PER_PROCESS = 16;
const SESSION_TIMEOUT_MS = 4000;
const TASKS_PER_S = 5;
const TRICKLE_S = 20;

interface SessionNews {
  type: 'session';
  loop: number;
  event: string;
  firstSession: string;
}
interface Report {
  first: string;
  now: string | null;
  state: string;
  completed: number;
  /** The loop's longest stretch without finishing a task, from registration to the stop. */
  longestIdleMs: number;
}
type Message =
  | SessionNews
  | { type: 'ready'; sessions: string[] }
  | { type: 'error'; loop: number; message: string }
  | { type: 'stopped'; report: Report[] };

const quiet = { warn: () => {} };

describe('an idle fleet under a trickle of tasks [zookeeper]', () => {
  it(`${PROCESSES * LOOPS_PER_PROCESS} workers (${LOOPS_PER_PROCESS} loops per process, a session each) keep every session`, {
    timeout: 240_000,
  }, async () => {
    const ns = await zkNamespace();
    const producer = await ns.connect();
    const world = 'fleet';
    const engine = createEngine(producer, { world, logger: quiet });
    await engine.init();
    const news: SessionNews[] = [];
    const errors: string[] = [];
    const ready: string[][] = [];
    const reports: Report[][] = [];
    const procs: ChildProcess[] = [];
    try {
      for (let p = 0; p < PROCESSES; p++) {
        const proc = fork(
          FLEET,
          [ns.connectString, world, String(LOOPS_PER_PROCESS), String(SESSION_TIMEOUT_MS)],
          { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
        );
        proc.on('message', (m: Message) => {
          if (m.type === 'session') news.push(m);
          else if (m.type === 'error') errors.push(`process ${p} loop ${m.loop}: ${m.message}`);
          else if (m.type === 'ready') ready.push(m.sessions);
          else if (m.type === 'stopped') reports.push(m.report);
        });
        procs.push(proc);
      }
      await until('every worker registered', () => ready.length === PROCESSES, 120_000);
      // A session lost (and renewed) is what must not happen. A connection dropped and won
      // back within its session, on a machine too busy to answer in time, keeps the session.
      const lost = () => news.filter((n) => n.event === 'lost' || n.event === 'connected');
      expect(lost(), 'sessions lost while the fleet started').toEqual([]);

      // The trickle: one task every 200 ms; it stops early at the first session lost.
      let queued = 0;
      const start = Date.now();
      while (queued < TASKS_PER_S * TRICKLE_S && lost().length === 0) {
        await engine.queue({ name: `t${queued}`, type: 'tick' });
        queued++;
        const next = start + (queued * 1000) / TASKS_PER_S;
        await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
      }
      expect(lost(), 'sessions lost during the trickle').toEqual([]);
      await until(
        'every task completed',
        async () => (await engine.counts()).completed === queued,
        60_000,
      );

      expect(lost(), 'sessions lost before the fleet stopped').toEqual([]);
      for (const proc of procs) proc.send({ type: 'stop' });
      await until('every process stopped', () => reports.length === PROCESSES, 60_000);
      const all = reports.flat();
      expect(all).toHaveLength(PROCESSES * LOOPS_PER_PROCESS);
      // Each loop is still on the session it started with: none expired and was renewed.
      expect(all.filter((r) => r.now !== r.first || r.state !== 'connected')).toEqual([]);
      expect(errors).toEqual([]);
      // What is at stake is the sessions of workers with nothing to do: most loops went a whole
      // session timeout or longer without finishing a task, only hearing of the others' tasks.
      // (100 tasks share out over 64 loops: some loops run none, not many; a loop that ran
      // up to 4 in the 20 s had such a stretch by the count alone.)
      const idle = all.filter((r) => r.longestIdleMs >= SESSION_TIMEOUT_MS);
      expect(idle.length).toBeGreaterThan(all.length / 2);
      expect(all.reduce((n, r) => n + r.completed, 0)).toBe(queued);
    } finally {
      for (const proc of procs) if (proc.exitCode === null) proc.kill('SIGKILL');
      engine.close();
      await ns.cleanup();
    }
  });
});
