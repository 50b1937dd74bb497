/**
 * The bench's `BENCH_ONLY=<phase>` knob (bench/README.md), run as a developer runs it: the
 * built bench script on a ZooKeeper and worker fleet of its own, with `--quick` counts. It
 * checks that the phase ran to its end and printed its result; the numbers are not judged
 * (speed is the bench's business, never a test's).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../../..');

/** The last stdout line of `node bench/run.mjs --quick` with BENCH_ONLY=`phase`, as JSON. */
async function onlyPhase(phase: string): Promise<Record<string, unknown>> {
  const { stdout } = await exec(process.execPath, ['bench/run.mjs', '--quick'], {
    cwd: ROOT,
    env: { ...process.env, BENCH_ONLY: phase },
    timeout: 240_000,
  });
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>;
}

interface Spread {
  p50: number;
  p99: number;
}

/**
 * What bounds a latency key, measured in its window: the workers' lone writes (claims and
 * completions sent with nothing of their own outstanding) and the machine's busy share.
 */
function expectFloor(res: Record<string, unknown>): void {
  const lone = res.loneWrite as Spread;
  expect(lone.p50).toBeGreaterThan(0);
  expect(lone.p99).toBeGreaterThanOrEqual(lone.p50);
  expect(res.busy).toBeGreaterThan(0);
  expect(res.busy).toBeLessThanOrEqual(1);
}

/** CPU time per task (µs) of the workers, the server and the producer: never nothing. */
function expectCpu(cpu: unknown): void {
  const { workersUsPerTask, serverUsPerTask, producerUsPerTask } = cpu as Record<string, number>;
  expect(workersUsPerTask).toBeGreaterThan(0);
  expect(serverUsPerTask).toBeGreaterThan(0);
  expect(producerUsPerTask).toBeGreaterThan(0);
}

describe('bench: BENCH_ONLY runs one phase alone', () => {
  it('tree: drains the whole quick tree (10 roots x 10 children x 10 grandchildren: 1,110 tasks)', {
    timeout: 300_000,
  }, async () => {
    const res = await onlyPhase('tree');
    expect(res.tasks).toBe(1110);
    expect(res.perSecond).toBeGreaterThan(0);
  });

  it('drain: every task drained, with the CPU time each cost the workers and the server', {
    timeout: 300_000,
  }, async () => {
    const res = await onlyPhase('drain');
    expect(res.perSecond).toBeGreaterThan(0);
    // A no-op task still costs its worker a claim, a read and a completion: never nothing.
    expect(res.workerCpuUsPerTask).toBeGreaterThan(0);
    expect(res.zkCpuUsPerTask).toBeGreaterThan(0);
    // The warm-up drain ran first, in a world of its own.
    expect(res.warmupWorkerCpuUsPerTask).toBeGreaterThan(0);
  });

  it('jobs: no-op jobs through the runner (cgroup and process group) and the spawn floor, with their ratios', {
    timeout: 300_000,
  }, async () => {
    const res = await onlyPhase('jobs');
    const results = res.results as Record<
      'job_noop_per_s' | 'job_noop_group_per_s' | 'job_spawn_floor_per_s',
      number
    >;
    const ratios = res.ratios as Record<'job_vs_spawn', number>;
    expect(results.job_noop_per_s).toBeGreaterThan(0);
    expect(results.job_noop_group_per_s).toBeGreaterThan(0);
    expect(results.job_spawn_floor_per_s).toBeGreaterThan(0);
    expect(ratios.job_vs_spawn).toBeCloseTo(
      results.job_noop_per_s / results.job_spawn_floor_per_s,
      1,
    );
    expect((res.details as Record<string, number[]>).job_rounds_per_s).toHaveLength(3);
  });

  it('ratio: raw creates and the drain in one run, and their ratio', {
    timeout: 300_000,
  }, async () => {
    const res = await onlyPhase('ratio');
    const raw = res.rawCreatesPerSecond as number;
    expect(raw).toBeGreaterThan(0);
    expect(res.drainVsRaw).toBeCloseTo((res.perSecond as number) / raw, 9);
  });

  it('tls: raw creates and a drain over TLS and in plain text, in turns, and their ratios', {
    timeout: 300_000,
  }, async () => {
    const res = await onlyPhase('tls');
    const results = res.results as { tls_raw_creates_per_s: number; tls_drain_tasks_per_s: number };
    const ratios = res.ratios as { tls_raw_vs_plain: number; tls_drain_vs_plain: number };
    const details = res.details as Record<string, unknown>;
    expect(results.tls_raw_creates_per_s).toBeGreaterThan(0);
    expect(results.tls_drain_tasks_per_s).toBeGreaterThan(0);
    const plainRaw = details.tls_plain_raw_creates_per_s as number;
    const plainDrain = details.tls_plain_drain_tasks_per_s as number;
    // Ratios of the same run's figures (each rounded to the unit before the key is printed).
    expect(ratios.tls_raw_vs_plain).toBeCloseTo(results.tls_raw_creates_per_s / plainRaw, 1);
    expect(ratios.tls_drain_vs_plain).toBeCloseTo(results.tls_drain_tasks_per_s / plainDrain, 1);
    // Two turns per transport, and CPU per drained task on each.
    expect((details.tls_drain_rounds_per_s as { tls: number[] }).tls).toHaveLength(2);
    expect((details.tls_drain_worker_cpu_us_per_task as { tls: number }).tls).toBeGreaterThan(0);
  });

  it('tracing: the drain untraced, then traced with its spans exported, and their ratio', {
    timeout: 300_000,
  }, async () => {
    const res = await onlyPhase('tracing');
    const plain = res.plain as Record<string, number>;
    const traced = res.traced as Record<string, number>;
    expect(plain.perSecond).toBeGreaterThan(0);
    expect(traced.perSecond).toBeGreaterThan(0);
    expect(res.tracedVsPlain).toBeCloseTo(traced.perSecond! / plain.perSecond!, 9);
    // Three spans a task (wait, run, settle) reached the stand-in collector.
    expect(traced.exportRequests).toBeGreaterThan(0);
    expect(traced.exportBytesPerTask).toBeGreaterThan(100);
  });

  it('unblock: every chain sampled, with percentiles', { timeout: 300_000 }, async () => {
    const res = await onlyPhase('unblock');
    // --quick: 200 chains/s for 3 s, the first second dropped as warm-up.
    expect(res).toMatchObject({ rate: 200, pending: 1000, samples: 400 });
    expect(res.p99).toBeGreaterThanOrEqual(res.p50 as number);
    expectFloor(res);
  });

  it('latency: every task after the warm-up sampled, with percentiles', {
    timeout: 300_000,
  }, async () => {
    const res = await onlyPhase('latency');
    // --quick: 200 tasks/s for 3 s, the first second dropped as warm-up.
    expect(res).toMatchObject({ samples: 400 });
    expect(res.p99).toBeGreaterThanOrEqual(res.p50 as number);
    expectFloor(res);
    // The producer's queue() round trips, one per sampled task.
    const queue = res.queue as Spread;
    expect(queue.p50).toBeGreaterThan(0);
    expect(queue.p99).toBeGreaterThanOrEqual(queue.p50);
    // What a task cost each part of the machine at this paced rate.
    expectCpu(res.cpu);
    // The floor: the same rate and warm-up, served by the bare client's fewest round trips.
    const floor = res.floor as Spread & { samples: number; busy: number; cpu: unknown };
    expect(floor.samples).toBe(400);
    expect(floor.p50).toBeGreaterThan(0);
    expect(floor.p99).toBeGreaterThanOrEqual(floor.p50);
    expect(floor.busy).toBeGreaterThan(0);
    expectCpu(floor.cpu);
  });

  it('recovery: the way back after an outage, from the restart, beside its floor and timeline', {
    timeout: 300_000,
  }, async () => {
    const res = await onlyPhase('recovery');
    const results = res.results as Record<string, number>;
    expect(results.recovery_floor_ms).toBeGreaterThan(0);
    expect(results.recovery_claim_ms).toBeGreaterThan(0);
    expect(results.recovery_ms).toBeGreaterThan(0);
    const ratios = res.ratios as Record<string, number>;
    expect(ratios.recovery_vs_floor).toBeCloseTo(
      results.recovery_ms! / results.recovery_floor_ms!,
      2,
    );
    const details = res.details as Record<string, unknown>;
    const timeline = details.recovery_timeline_ms as Record<string, number>;
    // In the order an outage runs: the session was lost while the server was down.
    expect(timeline.server_stopped).toBeLessThan(timeline.session_lost!);
    expect(timeline.session_lost).toBeLessThan(0);
    expect(timeline.session_renewed).toBeGreaterThan(0);
    expect(timeline.first_claim).toBe(results.recovery_claim_ms);
    // /healthz said so through the outage: 503 with a state, then 200 once serving.
    const states = (details.recovery_healthz as Array<[string, number]>).map(([s]) => s);
    // A probe sent just after the stop may still find the worker serving: its client has not
    // yet seen the connection drop. From the first 503 on, the outage is what it reports.
    const firstDown = states.findIndex((s) => !s.startsWith('200'));
    expect(firstDown).toBeGreaterThanOrEqual(0);
    expect(states.slice(0, firstDown).every((s) => s === '200 serving')).toBe(true);
    expect(states[firstDown]).toBe('503 suspended');
    expect(states.at(-1)).toBe('200 serving');
    expect(details.recovery_metrics_max_ms).toBeGreaterThan(0);
  });

  it('amqp: the bridge soak beside a plain consume-and-ack loop on the same broker, as ratios', {
    timeout: 300_000,
  }, async () => {
    const res = await onlyPhase('amqp');
    const results = res.results as Record<string, number>;
    const ratios = res.ratios as Record<string, number>;
    const details = res.details as Record<string, number>;
    // --quick: 400 mixed messages; every one got its verdict, and every answerable one its
    // result (one in ten is dead-lettered: not JSON, or a forbidden exchange).
    expect(details.amqp_verdicts).toBe(400);
    expect(details.amqp_results).toBe(360);
    expect(details.amqp_dead_letters).toBe(40);
    for (const key of [
      'amqp_plain_consume_ack_per_s',
      'amqp_bridge_messages_per_s',
      'amqp_bridge_results_per_s',
      'amqp_bridge_drain_s',
    ])
      expect(results[key], key).toBeGreaterThan(0);
    expect(ratios.amqp_messages_vs_plain).toBeCloseTo(
      results.amqp_bridge_messages_per_s! / results.amqp_plain_consume_ack_per_s!,
      1,
    );
    expect(details.amqp_bridge_rss_mb).toBeGreaterThan(0);
  });

  it('pending: holds the highest level pending while it drains, and reports the workers’ RSS', {
    timeout: 300_000,
  }, async () => {
    const res = await onlyPhase('pending');
    // --quick: the 5,000 level; the top-up never lets the backlog run dry.
    expect(res.perSecond).toBeGreaterThan(0);
    expect(res.rssMb).toBeGreaterThan(0);
    expect(res.pendingAtEnd).toBeGreaterThan(0);
  });
});
