/**
 * The bench's profiling and scale knobs (bench/README.md), run as a developer runs them: the
 * built bench script with `--quick` or reduced counts, on a ZooKeeper and worker fleet of its
 * own. Each knob is checked by what it produces (files, log lines, the flags the worker
 * processes report they run with), never by the numbers, which are the bench's business.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_HEAP_ROOM } from '@zoott/jobs/config';
import { afterAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../../..');
const WORKERS = 4;

/** `node bench/run.mjs <args>` with `env` added; its stdout's last line as JSON, and stderr. */
async function bench(
  args: string[],
  env: Record<string, string>,
): Promise<{ doc: Record<string, unknown>; stderr: string }> {
  const { stdout, stderr } = await exec(process.execPath, ['bench/run.mjs', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    timeout: 240_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const text = stdout.trim();
  // --json prints one indented document; BENCH_ONLY one line.
  const doc = text.startsWith('{\n') ? text : text.split('\n').at(-1)!;
  return { doc: JSON.parse(doc) as Record<string, unknown>, stderr };
}

const made: string[] = [];
function tempDir(name: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `zoott-bench-${name}-`));
  made.push(dir);
  return dir;
}
// Heap snapshots and profiles take hundreds of MB.
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** The files of `dir` whose names end in `suffix`, each read as JSON. */
function jsonFiles(dir: string, suffix: string): Record<string, unknown>[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(suffix))
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Record<string, unknown>);
}

describe('bench: the profiling and scale knobs', () => {
  it('BENCH_COUNT_CALLS, BENCH_CPU_PROF, BENCH_HEAP_PROF, BENCH_WORKER_FLAGS and BENCH_HEAP_ROOM on the drain', {
    timeout: 300_000,
  }, async () => {
    const cpu = tempDir('cpu');
    const heap = tempDir('heap');
    const { doc, stderr } = await bench(['--quick'], {
      BENCH_ONLY: 'drain',
      BENCH_COUNT_CALLS: '1',
      BENCH_CPU_PROF: cpu,
      BENCH_HEAP_PROF: heap,
      BENCH_WORKER_FLAGS: '--max-semi-space-size=2',
      BENCH_HEAP_ROOM: '20',
    });
    expect(doc.perSecond).toBeGreaterThan(0);
    // The worker processes report what they run with: the flags given, the profiler's own.
    const setup = doc.setup as { worker_node_flags: string[]; worker_heap_room: number };
    expect(setup.worker_node_flags).toContain('--max-semi-space-size=2');
    expect(setup.worker_node_flags).toContain('--cpu-prof');
    expect(setup.worker_node_flags).not.toContain('--max-semi-space-size=4');
    expect(setup.worker_heap_room).toBe(20);
    // One line of request counts per worker at each stop (the warm-up drain's, then the
    // measured drain's): a task costs reads and multis.
    const counts = [...stderr.matchAll(/^\[worker (\d+)\] calls (\{.*\})$/gm)];
    expect(counts.map((m) => m[1]).sort()).toEqual(['0', '0', '1', '1', '2', '2', '3', '3']);
    for (const m of counts) {
      const c = JSON.parse(m[2]!) as Record<string, number>;
      expect(c.get).toBeGreaterThan(0);
      expect(c.multi).toBeGreaterThan(0);
      expect(c.multi_ops).toBeGreaterThanOrEqual(c.multi!);
    }
    // A V8 CPU profile of every worker process.
    const profiles = jsonFiles(cpu, '.cpuprofile');
    expect(profiles).toHaveLength(WORKERS);
    for (const p of profiles) expect((p.nodes as unknown[]).length).toBeGreaterThan(1);
    // The heap profiles are per run: two drains, two of each worker's.
    const heaps = jsonFiles(heap, '.heapprofile');
    expect(heaps).toHaveLength(2 * WORKERS);
    for (const h of heaps) expect(h.head).toMatchObject({ callFrame: expect.any(Object) });
  });

  it("--peers: zoott and the BullMQ yardstick in turns, drain_vs_bullmq with each side's CPU per task", {
    timeout: 600_000,
  }, async () => {
    const results = tempDir('peers');
    const { doc, stderr } = await bench(['--peers', '--quick', '--json'], {
      BENCH_RESULTS_DIR: results,
    });
    expect(doc.drain_tasks_per_s).toBeGreaterThan(0);
    expect(doc.drain_worker_cpu_us_per_task).toBeGreaterThan(0);
    expect(doc.drain_zk_cpu_us_per_task).toBeGreaterThan(0);
    const details = doc.details as { bullmq_skipped: string | null; rounds: unknown[] };
    expect(details.rounds).toHaveLength(1);
    const ratio = (doc.ratios as { drain_vs_bullmq: number | null }).drain_vs_bullmq;
    // The yardstick runs wherever redis-server and the peers directory are there; else the
    // run says why it did not, on stderr and in the document, and has no ratio.
    if (details.bullmq_skipped === null) {
      expect(ratio).toBeGreaterThan(0);
      expect(doc.bullmq_drain_jobs_per_s).toBeGreaterThan(0);
      expect(doc.bullmq_worker_cpu_us_per_job).toBeGreaterThan(0);
      expect(doc.bullmq_redis_cpu_us_per_job).toBeGreaterThan(0);
    } else {
      expect(ratio).toBeNull();
      expect(stderr).toContain(`peers: BullMQ skipped: ${details.bullmq_skipped}`);
    }
    expect(JSON.parse(readFileSync(path.join(results, 'peers.json'), 'utf8'))).toEqual(doc);
  });

  it('--peers refuses a BENCH_BULLMQ_DIR without the yardstick, saying so', async () => {
    const empty = tempDir('no-peer');
    await expect(bench(['--peers', '--quick'], { BENCH_BULLMQ_DIR: empty })).rejects.toThrow(
      /BENCH_BULLMQ_DIR=.*no bench\.mjs there/,
    );
  });

  it('--scale with BENCH_SCALE_TASKS, BENCH_REAPER_LOG, BENCH_HEAP_SNAPSHOTS and BENCH_RESULTS_DIR', {
    timeout: 300_000,
  }, async () => {
    const snaps = tempDir('snaps');
    const results = tempDir('results');
    const { doc, stderr } = await bench(['--scale', '--json'], {
      BENCH_SCALE_TASKS: '3000',
      BENCH_REAPER_LOG: '1',
      BENCH_HEAP_SNAPSHOTS: snaps,
      BENCH_RESULTS_DIR: results,
    });
    // A reduced run keeps a tenth of its tasks (at least 1,000), so the limit is reached.
    expect(doc).toMatchObject({ scale_tasks: 3000, scale_retention_max_completed: 1000 });
    for (const key of [
      'scale_tasks_per_s',
      'scale_server_nodes_end',
      'scale_server_nodes_peak',
      'scale_server_node_bound',
      'scale_worker_rss_mb',
    ])
      expect(doc[key]).toBeGreaterThan(0);
    expect(Object.values(doc.pass as object)).toHaveLength(3);
    expect(doc.setup).toMatchObject({
      workers: WORKERS,
      worker_node_flags: ['--max-semi-space-size=4'],
      worker_heap_room: DEFAULT_HEAP_ROOM,
    });
    // The document goes to the results directory given, not over the committed results.
    expect(JSON.parse(readFileSync(path.join(results, 'scale.json'), 'utf8'))).toEqual(doc);
    // The elected reaper's passes, one line each.
    expect(stderr).toMatch(/^\[reaper \d+\] \d+ removed \d+ kept \d+ skipped \d+$/m);
    // A heap snapshot of every worker at 10%, 50% and 90% of the run.
    const names = readdirSync(snaps).sort();
    const expected = ['at10', 'at50', 'at90'].flatMap((at) =>
      Array.from({ length: WORKERS }, (_, w) => `${at}-w${w}.heapsnapshot`),
    );
    expect(names).toEqual(expected.sort());
    for (const n of names)
      expect(readFileSync(path.join(snaps, n), 'utf8').slice(0, 12)).toBe('{"snapshot":');
  });

  it('--fleet with BENCH_FLEET_SIZES, BENCH_FLEET_TASKS, BENCH_FLEET_PROCS, BENCH_FLEET_DEADLINE_S, BENCH_FLEET_REOWN_SAMPLES and BENCH_RESULTS_DIR', {
    timeout: 300_000,
  }, async () => {
    const results = tempDir('fleet');
    const { doc, stderr } = await bench(['--fleet', '--json'], {
      BENCH_FLEET_SIZES: '3,6',
      BENCH_FLEET_TASKS: '300',
      BENCH_FLEET_PROCS: '2',
      BENCH_FLEET_DEADLINE_S: '60',
      BENCH_FLEET_REOWN_SAMPLES: '2',
      BENCH_RESULTS_DIR: results,
    });
    const keys = doc.keys as Record<string, Record<string, number | null>>;
    for (const key of [
      'fleet_join_ms',
      'fleet_join_packets_per_worker',
      'fleet_drain_tasks_per_s',
      'fleet_claim_conflicts_per_task',
      'fleet_reown_ms',
      'fleet_idle_task_packets',
      'fleet_idle_task_requests',
      'fleet_restart_ms',
      'fleet_restart_packets_per_worker',
    ])
      expect(Object.keys(keys[key] ?? {})).toEqual(['3', '6']);
    for (const n of ['3', '6']) {
      expect(keys.fleet_drain_tasks_per_s?.[n]).toBeGreaterThan(0);
      expect(keys.fleet_join_ms?.[n]).toBeGreaterThanOrEqual(0);
      // The owner's claim and completion at least: the workers' own request count.
      expect(keys.fleet_idle_task_requests?.[n]).toBeGreaterThanOrEqual(2);
      // Every task drained, within the deadline.
      expect((doc.details as Record<string, object>)[n]).toMatchObject({
        drain_completed: 300,
        drain_timed_out: false,
        join_timed_out: false,
      });
    }
    // The ratios the issue names need 16, 64 and 256; the first and last sizes always count.
    expect(doc.ratios).toMatchObject({
      fleet_drain_256_vs_64: null,
      fleet_join_packets_per_worker_256_vs_16: null,
    });
    expect((doc.ratios as Record<string, number>).fleet_drain_last_vs_first).toBeGreaterThan(0);
    expect(doc.setup).toMatchObject({ sizes: [3, 6], tasks: 300, processes: 2 });
    expect(JSON.parse(readFileSync(path.join(results, 'fleet.json'), 'utf8'))).toEqual(doc);
    expect(stderr).toMatch(/fleet 6: drained 300 in/);
    expect(stderr).toMatch(/fleet 6: join timeline/);
    expect(
      (doc.details as Record<string, { reown_samples_ms: unknown[] }>)['6']?.reown_samples_ms,
    ).toHaveLength(2);
  });

  it('--fleet with BENCH_FLEET_STEPS runs those steps alone, and refuses a step it does not know', {
    timeout: 300_000,
  }, async () => {
    const results = tempDir('fleet-steps');
    const { doc, stderr } = await bench(['--fleet', '--json'], {
      BENCH_FLEET_SIZES: '4',
      BENCH_FLEET_PROCS: '2',
      BENCH_FLEET_STEPS: 'join,reown',
      BENCH_FLEET_REOWN_SAMPLES: '3',
      BENCH_FLEET_DEADLINE_S: '60',
      BENCH_RESULTS_DIR: results,
    });
    const keys = doc.keys as Record<string, Record<string, number | null>>;
    expect(keys.fleet_reown_ms?.['4']).toBeGreaterThanOrEqual(0);
    expect(keys.fleet_drain_tasks_per_s).toEqual({});
    expect(keys.fleet_restart_ms).toEqual({});
    expect(doc.setup).toMatchObject({ steps: ['join', 'reown'], reown_samples: 3 });
    expect(
      (doc.details as Record<string, { reown_samples_ms: unknown[] }>)['4']?.reown_samples_ms,
    ).toHaveLength(3);
    expect(stderr).not.toMatch(/drained/);
    await expect(
      bench(['--fleet', '--json'], { BENCH_FLEET_STEPS: 'join,soak', BENCH_RESULTS_DIR: results }),
    ).rejects.toThrow(/BENCH_FLEET_STEPS: soak is no step/);
  });
});
