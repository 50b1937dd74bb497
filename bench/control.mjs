// Bench phases of the job-control features: cluster-wide rate limits and the leader-election
// recipe's failover. Imported by bench/run.mjs; uses the built packages only.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEngine, setRateLimit } from '../packages/core/dist/index.js';
import { LeaderElection } from '../packages/core/dist/recipes.js';
import { connectZk, killSession } from '../packages/zk-adapter/dist/index.js';

/** The window is cut in slices of this many seconds; no slice may go above 1.1 x the limit. */
const SLICE_S = 2;
const quiet = { warn: () => {}, info: () => {}, debug: () => {}, error: () => {} };

/**
 * Rate-limit accuracy: a limit of `limit`/s on the no-op type, far more tasks queued than the
 * limit lets run, the fleet's workers draining them. Achieved = task starts (claims) in the
 * window / window; also the highest starts of any 2-s slice of the window. The limit is set
 * before the workers start, so the window measures the steady state (a join is the warm-up).
 */
export async function rateLimitAccuracy(c, fleet, { limit, warmupS, windowS, log }) {
  const world = 'ratelimit';
  const engine = createEngine(c, { world, logger: quiet });
  await engine.init();
  await setRateLimit(engine, 'noop', `${limit}/s`);
  // Three times what the limit lets run: the workers are never short of work.
  const total = Math.ceil(limit * (warmupS + windowS) * 3);
  let next = 0;
  await Promise.all(
    Array.from({ length: 200 }, async () => {
      while (next < total) {
        const i = next++;
        await engine.queue({ name: `rl${i}`, type: 'noop', data: i });
      }
    }),
  );
  log(`ratelimit: queued ${total}, limit ${limit}/s; running ${warmupS + windowS} s`);
  // A limit caps task starts: count the workers' claims (their stats, every 50 ms), not the
  // completions, which trail the starts by the handlers' run and the settle round trip.
  const claimed = new Map();
  const listeners = fleet.workers.map((w, i) => {
    const listen = (m) => {
      if (m.type === 'stats') claimed.set(i, m.claimed);
    };
    w.child.on('message', listen);
    return () => w.child.off('message', listen);
  });
  const starts = () => [...claimed.values()].reduce((a, b) => a + b, 0);
  await fleet.run(world);
  await sleep(warmupS * 1000);
  const t0 = performance.now();
  const c0 = starts();
  const slices = [];
  let last = c0;
  for (let s = 0; s < windowS / SLICE_S; s++) {
    await sleep(t0 + (s + 1) * SLICE_S * 1000 - performance.now());
    const now = starts();
    slices.push(now - last);
    last = now;
  }
  const seconds = (performance.now() - t0) / 1000;
  const achieved = (starts() - c0) / seconds;
  for (const off of listeners) off();
  await fleet.stop();
  const counts = await engine.counts();
  return {
    limit,
    achieved,
    accuracy: achieved / limit,
    maxSliceRatio: Math.max(...slices) / (limit * SLICE_S),
    slices,
    seconds,
    leftPending: counts.pending,
  };
}

/**
 * Leader failover of the election recipe: `candidates` sessions stand; the leader's session is
 * expired by the server (`killSession`, what a crash looks like once its session timeout has
 * passed) and the time until the next candidate leads is measured. The session timeout itself
 * is configuration and is not part of the figure.
 */
export async function leaderFailover(connectString, { candidates, rounds, log }) {
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const clients = await Promise.all(
      Array.from({ length: candidates }, () =>
        connectZk(connectString, { sessionTimeoutMs: 30_000 }),
      ),
    );
    const path = `/bench-election/r${r}`;
    const elections = clients.map((z, i) => new LeaderElection(z, path, { identifier: `c${i}` }));
    await elections[0].lead();
    // The others enter one after the other, so the successor is known: candidate 1.
    const waiting = [];
    for (const e of elections.slice(1)) {
      // The ones still waiting at the end are withdrawn: their lead() fails with ABORTED.
      waiting.push(e.lead().catch(() => undefined));
      while ((await clients[0].children(path)).length < waiting.length + 1) await sleep(1);
    }
    const t0 = performance.now();
    const elected = waiting[0].then(() => performance.now());
    await killSession(clients[0]);
    times.push((await elected) - t0);
    for (const e of elections.slice(1)) await e.close();
    await Promise.all(clients.map((z) => z.close().catch(() => undefined)));
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  log(`leader failover: median ${median.toFixed(1)} ms over ${rounds} rounds`);
  return { median, max: times[times.length - 1], rounds };
}

export const CONTROL_TARGETS = {
  accuracyLow: 0.9,
  accuracyHigh: 1.1,
  sliceMax: 1.1,
  failoverMs: 1000,
};

/**
 * Runs both phases on the bench's server and fleet; returns the result keys, the checks
 * (`[name, value, goal, ok]`), details and table rows run.mjs adds to its own.
 */
export async function controlPhases(c, fleet, connectString, { quick, log }) {
  const limit = 100;
  const rl = await rateLimitAccuracy(c, fleet, {
    limit,
    warmupS: quick ? 1 : 2,
    windowS: quick ? 4 : 10,
    log,
  });
  log(
    `ratelimit: ${rl.achieved.toFixed(1)}/s of ${limit}/s (${rl.accuracy.toFixed(3)}), highest 2-s slice ${rl.maxSliceRatio.toFixed(3)} x`,
  );
  const fo = await leaderFailover(connectString, { candidates: 4, rounds: quick ? 3 : 15, log });
  const T = CONTROL_TARGETS;
  const results = {
    rate_limit_accuracy: Number(rl.accuracy.toFixed(3)),
    leader_failover_ms: Number(fo.median.toFixed(1)),
  };
  return {
    results,
    checks: [
      [
        'rate limit achieved / limit',
        results.rate_limit_accuracy,
        `${T.accuracyLow}-${T.accuracyHigh}`,
        rl.accuracy >= T.accuracyLow && rl.accuracy <= T.accuracyHigh,
      ],
      [
        'rate limit, highest 2-s slice',
        rl.maxSliceRatio,
        `<= ${T.sliceMax}`,
        rl.maxSliceRatio <= T.sliceMax,
      ],
      ['leader failover (ms), median', fo.median, `<= ${T.failoverMs}`, fo.median <= T.failoverMs],
    ],
    details: {
      rate_limit_per_s: limit,
      rate_limit_achieved_per_s: Number(rl.achieved.toFixed(2)),
      rate_limit_slices_2s: rl.slices,
      rate_limit_max_slice_ratio: Number(rl.maxSliceRatio.toFixed(3)),
      leader_failover_max_ms: Number(fo.max.toFixed(1)),
      leader_failover_rounds: fo.rounds,
    },
    rows: [
      [`rate limit achieved / limit (${limit}/s, 4 workers)`, results.rate_limit_accuracy],
      ['leader failover ms (median, session expired)', results.leader_failover_ms],
    ],
  };
}
