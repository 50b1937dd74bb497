// The join's timeline for the fleet phase (bench/fleet.mjs): from each worker's registration,
// registry listings (sent, answered) and registry node rewrites (one per change of its owned
// buckets), where the time from the last registration to stable ownership goes.

/** The q-quantile of sorted numbers (nearest rank), or null for none. */
export function quantile(sorted, q) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** Median, lowest and highest of some numbers (rounded), and how many. */
export function spread(values) {
  const sorted = values.filter((v) => typeof v === 'number').sort((a, b) => a - b);
  const round = (v) => (v === null ? null : Math.round(v));
  return {
    n: sorted.length,
    median: round(quantile(sorted, 0.5)),
    p90: round(quantile(sorted, 0.9)),
    min: round(sorted[0] ?? null),
    max: round(sorted[sorted.length - 1] ?? null),
  };
}

/**
 * Summarises the workers' timelines (`{registeredAt, listings: [[sent, answered]], owns:
 * [[at, count]]}` each, wall-clock ms) against the last registration and `settledAt` (the last
 * change of ownership). Per worker, after the last registration: how long until its first
 * listing went out (the pace and its loop), how long that listing took, how many listings and
 * changes of its buckets it made, and when it last changed its buckets; the worker that changed last is shown
 * whole, relative to the last registration.
 */
export function joinTimeline(members, settledAt) {
  const regs = members.map((m) => m.registeredAt).filter((t) => t > 0);
  if (regs.length === 0) return null;
  const first = Math.min(...regs);
  const last = Math.max(...regs);
  const firstRead = [];
  const readTook = [];
  const readsAfter = [];
  const ownsAfter = [];
  const lastOwn = [];
  const readsInWave = [];
  const regReads = [];
  const regReadsTook = [];
  const ownsInWave = [];
  let latest = null;
  for (const m of members) {
    const after = m.listings.filter(([sent]) => sent >= last);
    readsAfter.push(after.length);
    readsInWave.push(m.listings.filter(([sent]) => sent < last).length);
    if (after.length > 0) {
      firstRead.push(after[0][0] - last);
      readTook.push((after[0][3] ?? after[0][1]) - after[0][0]);
    }
    // The registrations' reads of every listing (the first listing reads the whole fleet).
    for (const listing of m.listings)
      if (listing[4] > 0) {
        regReads.push(listing[4]);
        regReadsTook.push(listing[3] - listing[2]);
      }
    // Changes of its owned buckets as its process sampled them (every 25 ms); its registry
    // node's rewrite follows each.
    const owns = m.changes.filter(([at]) => at >= last);
    ownsAfter.push(owns.length);
    ownsInWave.push(m.changes.filter(([at]) => at < last).length);
    if (owns.length > 0) {
      const at = owns[owns.length - 1][0];
      lastOwn.push(at - last);
      if (latest === null || at > latest.at) latest = { at, m };
    }
  }
  const rel = (t) => Math.round(t - last);
  return {
    registration_wave_ms: Math.round(last - first),
    settled_after_last_registration_ms: settledAt === null ? null : rel(settledAt),
    first_listing_after_last_registration_ms: spread(firstRead),
    that_listing_took_ms: spread(readTook),
    registrations_read_per_listing: spread(regReads),
    registration_reads_took_ms: spread(regReadsTook),
    listings_per_worker_during_wave: spread(readsInWave),
    listings_per_worker_after_last_registration: spread(readsAfter),
    changes_per_worker_during_wave: spread(ownsInWave),
    changes_per_worker_after_last_registration: spread(ownsAfter),
    last_change_after_last_registration_ms: spread(lastOwn),
    latest_worker:
      latest === null
        ? null
        : {
            registered: rel(latest.m.registeredAt),
            listings: latest.m.listings.map((listing) =>
              listing.map((t, i) => (i < 4 && t !== null ? rel(t) : t)),
            ),
            changes: latest.m.changes.map(([at, count]) => [rel(at), count]),
            rewrites: latest.m.owns.map(([at, count]) => [rel(at), count]),
            requests: (latest.m.trace ?? []).map(
              ([at, method, tail]) => `${rel(at)} ${method} ${tail}`,
            ),
          },
  };
}

/** One line of the timeline for the log. */
export function timelineLine(n, tl) {
  if (tl === null) return `fleet ${n}: no timeline`;
  const s = (x) => `${x.median}/${x.p90}/${x.max}`;
  return (
    `fleet ${n}: join timeline (median/p90/max ms after the last registration; wave ${tl.registration_wave_ms} ms): ` +
    `first listing ${s(tl.first_listing_after_last_registration_ms)}, it took ${s(tl.that_listing_took_ms)} (with its reads), ` +
    `registrations read per listing ${s(tl.registrations_read_per_listing)} in ${s(tl.registration_reads_took_ms)}, ` +
    `last change of owned buckets ${s(tl.last_change_after_last_registration_ms)}; listings per worker during/after ` +
    `${tl.listings_per_worker_during_wave.median}/${tl.listings_per_worker_after_last_registration.median}, ` +
    `changes ${tl.changes_per_worker_during_wave.median}/${tl.changes_per_worker_after_last_registration.median}; ` +
    `latest worker ${JSON.stringify(tl.latest_worker)}`
  );
}
