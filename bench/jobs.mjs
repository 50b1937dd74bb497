// Bench phase of the job runner: what starting a job costs. Imported by bench/run.mjs
// (`BENCH_ONLY=jobs` runs it alone); uses the built packages only, and no ZooKeeper: the
// runner's own cost per process, not the engine's per task.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { runRegularJob } from '../packages/jobs/dist/internal.js';

const NOOP = '/bin/true';

/** `n` runs of `one()`, `width` at a time; resolves with the runs per second. */
async function rate(n, width, one) {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) {
        next++;
        await one();
      }
    }),
  );
  return n / ((performance.now() - t0) / 1000);
}

/** The floor: a bare `spawn` of the no-op, nothing else (no group, no capture, no launcher). */
function bareSpawn() {
  return new Promise((resolve, reject) => {
    const child = spawn(NOOP, [], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', resolve);
  });
}

/** A no-op regular job through the runner, as a worker runs one (capture, fd 3, supervision). */
function noopJob(options) {
  return async () => {
    const r = await runRegularJob(
      { executable: NOOP },
      { serverName: 'bench', onReportLine: () => {}, ...options },
    );
    if (r.exit !== 0) throw new Error(`no-op job failed: ${JSON.stringify(r)}`);
  };
}

/**
 * No-op jobs per second through `runRegularJob`, `width` at a time, in a cgroup of its own
 * (`auto`, where this process may make one: as root) and held by its process group only
 * (`off`), against the bare spawn of the same executable, measured in turn in the same run
 * (three rounds each, the median kept): `ratios.job_vs_spawn` is what the runner keeps of the
 * spawn rate, `job_group_vs_spawn` the same without the cgroup. Every job goes through the
 * launcher and is known to the job keeper, as in a worker.
 */
export async function jobPhases({ quick, log }) {
  const n = quick ? 100 : 1000;
  const width = 4;
  const runs = { floor: [], cgroup: [], group: [] };
  // Warm-up: JIT, the keeper's start, the process's job cgroup.
  await rate(Math.min(n, 100), width, noopJob({ cgroup: 'auto' }));
  for (let round = 0; round < 3; round++) {
    runs.floor.push(await rate(n, width, bareSpawn));
    runs.cgroup.push(await rate(n, width, noopJob({ cgroup: 'auto' })));
    runs.group.push(await rate(n, width, noopJob({ cgroup: 'off' })));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[1];
  const results = {
    job_noop_per_s: Math.round(median(runs.cgroup)),
    job_noop_group_per_s: Math.round(median(runs.group)),
    job_spawn_floor_per_s: Math.round(median(runs.floor)),
  };
  log(
    `jobs: ${results.job_noop_per_s} no-op jobs/s (cgroup), ${results.job_noop_group_per_s}/s (process group), ${results.job_spawn_floor_per_s}/s bare spawn`,
  );
  return {
    results,
    rows: [
      ['no-op jobs/s, cgroup (runner, 4 at once)', results.job_noop_per_s],
      ['no-op jobs/s, process group', results.job_noop_group_per_s],
      ['  bare spawn floor /s', results.job_spawn_floor_per_s],
    ],
    ratios: {
      job_vs_spawn: Number((median(runs.cgroup) / median(runs.floor)).toFixed(3)),
      job_group_vs_spawn: Number((median(runs.group) / median(runs.floor)).toFixed(3)),
    },
    details: {
      job_runs_per_round: n,
      job_width: width,
      job_rounds_per_s: runs.cgroup.map(Math.round),
      job_group_rounds_per_s: runs.group.map(Math.round),
      job_spawn_rounds_per_s: runs.floor.map(Math.round),
    },
  };
}
