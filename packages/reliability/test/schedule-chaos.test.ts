/**
 * Schedules under chaos: three real worker daemons on a 3-server ensemble elect one scheduler
 * for a schedule that ticks every second; the scheduler's process is SIGKILLed (twice, each
 * time whichever worker is the scheduler then). Another worker takes over once the dead
 * session expires, queues the ticks missed meanwhile, and at the end every tick from the
 * first to the last has exactly one task: none missing, none queued twice.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  addSchedule,
  createEngine,
  currentScheduler,
  listSchedules,
  nextTick,
  tickTaskName,
} from '@zoott/core';
import { connectZk } from '@zoott/zk-adapter';
import { startEnsemble } from '@zoott/zk-testkit';
import { describe, expect, it } from 'vitest';
import { WORKER_BIN } from './support/chaos-run.js';

const HANDLERS = fileURLToPath(new URL('./support/chaos-handlers.mjs', import.meta.url));
const SESSION_TIMEOUT_MS = 4000;
const WORKERS = 3;
const KILLS = 2;
const quiet = { warn: () => {} };

/** Polls `check` (real time) until it yields a value, failing after `ms`. */
async function until<T>(check: () => Promise<T | null>, what: string, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check().catch(() => null);
    if (v !== null) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('schedules: the scheduler worker is SIGKILLed on a 3-server ensemble', () => {
  it('ticks continue with exactly one task per tick', { timeout: 300_000 }, async () => {
    const ensemble = await startEnsemble();
    const dir = mkdtempSync(join(tmpdir(), 'zoott-sched-chaos-'));
    const eventLog = join(dir, 'events.jsonl');
    writeFileSync(eventLog, '');
    const procs = new Map<number, ChildProcess>();
    let generation = 0;
    const admin = await connectZk(ensemble.connectString);
    await admin.create('/sched').catch(() => undefined);
    await admin.close();
    const producer = await connectZk(`${ensemble.connectString}/sched`, {
      sessionTimeoutMs: 20_000,
    });
    const spawnWorker = (slot: number) => {
      generation++;
      const out = openSync(join(dir, `worker-${slot}.log`), 'a');
      const proc = spawn(
        process.execPath,
        [
          WORKER_BIN,
          ...['--connect', `${ensemble.connectString}/sched`, '--world', 'sched'],
          ...['--handlers', HANDLERS, '--types', 'chaos'],
          ...['--session-timeout', String(SESSION_TIMEOUT_MS), '--grace', '1000'],
          ...['--node-id', `sched-${slot}-${generation}`, '--log-level', 'info'],
        ],
        { env: { ...process.env, ZOOTT_CHAOS_LOG: eventLog }, stdio: ['ignore', out, out] },
      );
      procs.set(slot, proc);
    };
    const exited = (p: ChildProcess) =>
      new Promise<void>((resolve) => {
        if (p.exitCode !== null || p.signalCode !== null) resolve();
        else p.once('exit', () => resolve());
      });
    try {
      const engine = createEngine(producer, { world: 'sched', buckets: 4, logger: quiet });
      await engine.init();
      const added = await addSchedule(engine, { name: 'beat', cron: '* * * * * *', type: 'beat' });
      for (let slot = 0; slot < WORKERS; slot++) spawnWorker(slot);

      const lastTick = async () => (await listSchedules(engine))[0]?.lastTick ?? 0;
      const killed: string[] = [];
      for (let k = 0; k < KILLS; k++) {
        const leader = await until(async () => {
          const id = await currentScheduler(engine);
          return id !== null && !killed.includes(id) ? id : null;
        }, 'a scheduler');
        // It ticks: the schedule's progress moves while it leads.
        const before = await lastTick();
        await until(async () => ((await lastTick()) > before ? true : null), 'a tick');
        const slot = Number(/^sched-(\d+)-/.exec(leader)![1]);
        const proc = procs.get(slot)!;
        proc.kill('SIGKILL');
        await exited(proc);
        const killedAt = Date.now();
        killed.push(leader);
        spawnWorker(slot);
        // Another worker takes over once the dead session expires, and ticks go on past it.
        const next = await until(async () => {
          const id = await currentScheduler(engine);
          return id !== null && id !== leader ? id : null;
        }, 'the next scheduler');
        expect(next).not.toBe(leader);
        await until(
          async () => ((await lastTick()) > killedAt + 2000 ? true : null),
          'ticks after the failover',
        );
      }

      // Stop every worker gracefully: the schedule's progress stands still from here.
      for (const p of procs.values()) p.kill('SIGTERM');
      await Promise.all([...procs.values()].map(exited));
      const last = await lastTick();
      const expected: string[] = [];
      for (
        let t = nextTick(added, added.createdAt);
        t !== null && t <= last;
        t = nextTick(added, t)
      )
        expected.push(tickTaskName('beat', t));
      const pending = (await engine.list('pending')).map((t) => t.key.join('|')).sort();
      expect(pending).toEqual(expected.sort());
      // Queued once each: never re-queued (a re-queue rewrites the tree node).
      const versions = await Promise.all(
        expected.map(async (name) => (await producer.get(`/zoott_sched/${name}`)).stat.version),
      );
      expect(versions.every((v) => v === 0)).toBe(true);
      expect(killed).toHaveLength(KILLS);
      console.log(
        `[schedule-chaos] ${expected.length} ticks, ${KILLS} scheduler kills, schedulers ${killed.join(', ')}`,
      );
    } finally {
      for (const p of procs.values()) if (p.exitCode === null) p.kill('SIGKILL');
      await Promise.all([...procs.values()].map(exited));
      await producer.close().catch(() => undefined);
      await ensemble.stop();
      if (!process.env.ZOOTT_CHAOS_KEEP) rmSync(dir, { recursive: true, force: true });
    }
  });
});
