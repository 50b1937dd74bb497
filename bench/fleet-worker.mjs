// One process of the fleet phase (bench/fleet.mjs): many zoott workers, each with its own
// ZooKeeper session and worker loop (no-op handler), driven by the coordinator over IPC.
// Reports each worker's owned buckets (stamped when they changed) and its claim multis.
import { performance } from 'node:perf_hooks';
import { runWorker } from '../packages/core/dist/index.js';
import { connectZk } from '../packages/zk-adapter/dist/index.js';

const [connectString, proc] = process.argv.slice(2);
const quiet = { warn: () => {}, info: () => {}, debug: () => {}, error: () => {} };
const wallNow = () => performance.timeOrigin + performance.now();
const AREA_W = '/zoott_w/';
const REGISTRY = '/zoott_workers/';

/** @type {{ client: any, handle: any, claims: number, refused: number, owned: string, changedAt: number, stopped: boolean, errors: number }[]} */
const members = [];
const errors = [];

/** Counts the claim multis (a create of a working node) of `m` and the refused ones. */
function countClaims(m) {
  const orig = m.client.multi.bind(m.client);
  m.client.multi = (ops, ...rest) => {
    const claim = ops.some((o) => o.op === 'create' && o.path.includes(AREA_W));
    if (!claim) return orig(ops, ...rest);
    m.claims++;
    return orig(ops, ...rest).catch((err) => {
      m.refused++;
      throw err;
    });
  };
}

/**
 * Stamps when `m` sends the deletion of its registry node (its unregistration): the others'
 * registry watches fire once the server applies it, so a re-own is timed from here, not from
 * the stop command (which first waits for the worker's loop and running tasks to end).
 */
function stampUnregistration(m) {
  const orig = m.client.delete.bind(m.client);
  m.client.delete = (p, ...rest) => {
    if (typeof p === 'string' && p.startsWith(REGISTRY)) m.unregisteredAt = wallNow();
    return orig(p, ...rest);
  };
  // The join's timeline: each listing of the registry (sent, answered) and each rewrite of
  // its registry node (sent when its owned buckets changed, with their count).
  const children = m.client.children.bind(m.client);
  m.client.children = (p, ...rest) => {
    const out = children(p, ...rest);
    if (typeof p === 'string' && p.startsWith(REGISTRY)) {
      // [sent, answered, then its registrations' reads: first sent, last answered, count]
      const listing = [wallNow(), null, null, null, 0];
      m.listings.push(listing);
      out.then(
        () => {
          listing[1] = wallNow();
        },
        () => undefined,
      );
    }
    return out;
  };
  const get = m.client.get.bind(m.client);
  m.client.get = (p, ...rest) => {
    const out = get(p, ...rest);
    const listing = m.listings[m.listings.length - 1];
    if (listing && typeof p === 'string' && p.startsWith(REGISTRY) && p.includes('/worker-')) {
      listing[2] ??= wallNow();
      listing[4]++;
      out.then(
        () => {
          listing[3] = wallNow();
        },
        () => undefined,
      );
    }
    return out;
  };
  const set = m.client.set.bind(m.client);
  m.client.set = (p, data, ...rest) => {
    if (typeof p === 'string' && p.startsWith(REGISTRY)) {
      let count = -1;
      try {
        count = JSON.parse(Buffer.from(data).toString('utf8')).buckets.length;
      } catch {}
      m.owns.push([wallNow(), count]);
    }
    return set(p, data, ...rest);
  };
  // And when its registration was made (the create's reply): a join settles after the last.
  const create = m.client.create.bind(m.client);
  m.client.create = (p, ...rest) => {
    const out = create(p, ...rest);
    if (typeof p === 'string' && p.startsWith(REGISTRY))
      out.then(
        () => {
          m.registeredAt = wallNow();
        },
        () => undefined,
      );
    return out;
  };
}

/** Requests the process's workers sent, by client method (what a join spends, by kind). */
const calls = {};
const COUNTED = [
  'children',
  'childrenWithStat',
  'get',
  'exists',
  'create',
  'set',
  'delete',
  'multi',
  'watchTree',
  'removeWatches',
];

/** Counts `m`'s requests by method. */
function countCalls(m) {
  for (const name of COUNTED) {
    const orig = m.client[name];
    if (typeof orig !== 'function') continue;
    const bound = orig.bind(m.client);
    m.client[name] = (...args) => {
      calls[name] = (calls[name] ?? 0) + 1;
      // The join's requests in order (a registration's reads are in its listing's entry).
      const p = typeof args[0] === 'string' ? args[0] : '';
      if (m.trace.length < 400 && !(name === 'get' && p.includes('/worker-')))
        m.trace.push([wallNow(), name, p.slice(p.lastIndexOf('/', p.length - 2))]);
      return bound(...args);
    };
  }
}

function snapshot() {
  let completed = 0;
  let claims = 0;
  let refused = 0;
  const owners = [];
  for (let i = 0; i < members.length; i++) {
    const m = members[i];
    completed += m.handle?.stats.completed ?? 0;
    claims += m.claims;
    refused += m.refused;
    if (m.handle && !m.stopped) {
      const owned = m.handle.buckets.join(',');
      if (owned !== m.owned) {
        m.owned = owned;
        m.changedAt = wallNow();
        m.changes.push([m.changedAt, m.handle.buckets.length]);
      }
    }
    owners.push({
      i,
      owned: m.stopped ? null : m.owned,
      changedAt: m.changedAt,
      registeredAt: m.registeredAt,
    });
  }
  return { completed, claims, refused, owners, calls };
}

// Ownership is sampled often: a change is stamped within this many ms of when it happened.
const ticker = setInterval(() => {
  const s = snapshot();
  process.send?.({ type: 'stats', ...s, errors: errors.length > 0 ? errors.splice(0) : undefined });
}, 25);

process.on('message', async (msg) => {
  try {
    if (msg.cmd === 'connect') {
      const made = await Promise.all(
        Array.from({ length: msg.count }, () =>
          connectZk(connectString, { sessionTimeoutMs: msg.sessionTimeoutMs }),
        ),
      );
      for (const client of made) {
        const m = {
          client,
          handle: null,
          claims: 0,
          refused: 0,
          owned: '',
          changedAt: 0,
          stopped: false,
          unregisteredAt: null,
          registeredAt: 0,
          listings: [],
          owns: [],
          changes: [],
          trace: [],
        };
        countClaims(m);
        stampUnregistration(m);
        countCalls(m);
        members.push(m);
      }
      process.send?.({ type: 'connected' });
    } else if (msg.cmd === 'run') {
      // Starts the members not started yet (a restart adds new ones to a running process).
      for (let i = 0; i < members.length; i++) {
        const m = members[i];
        if (m.handle || m.stopped) continue;
        m.handle = runWorker(
          m.client,
          { noop: () => {} },
          {
            world: msg.world,
            id: `fleet-${proc}-${i}`,
            concurrency: msg.concurrency,
            logger: quiet,
            scheduler: false,
          },
        );
        m.handle.on('error', (e) => errors.push(String(e?.error ?? e)));
        m.handle.done.catch((err) => errors.push(String(err)));
      }
      process.send?.({ type: 'running' });
    } else if (msg.cmd === 'stop') {
      // Stops the listed workers cleanly (each unregisters) and closes their sessions.
      await Promise.all(
        msg.which.map(async (i) => {
          const m = members[i];
          m.stopped = true;
          await m.handle?.stop();
          await m.client.close();
        }),
      );
      process.send?.({
        type: 'stopped',
        unregisteredAt: msg.which.map((i) => members[i].unregisteredAt),
      });
    } else if (msg.cmd === 'timeline') {
      // Each live worker's registration, registry listings and rewrites since `since`.
      const out = [];
      for (let i = 0; i < members.length; i++) {
        const m = members[i];
        if (m.stopped || !m.handle) continue;
        out.push({
          registeredAt: m.registeredAt,
          listings: m.listings.filter(([sent]) => sent >= msg.since),
          owns: m.owns.filter(([at]) => at >= msg.since),
          changes: m.changes.filter(([at]) => at >= msg.since),
          trace: m.trace.filter(([at]) => at >= msg.since),
        });
      }
      process.send?.({ type: 'timeline', members: out });
    } else if (msg.cmd === 'exit') {
      clearInterval(ticker);
      await Promise.all(
        members.map(async (m) => {
          if (!m.stopped) await m.handle?.stop();
          await m.client.close().catch(() => undefined);
        }),
      );
      process.disconnect?.();
      process.exit(0);
    }
  } catch (err) {
    process.send?.({ type: 'failed', error: String(err?.stack ?? err) });
  }
});
process.send?.({ type: 'ready' });
