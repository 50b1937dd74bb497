import type { Coordinator } from '../contract/coordinator.js';
import { isZoottError } from '../contract/errors.js';
import { decodeJson } from '../contract/paths.js';
import type { EngineContext } from '../engine/context.js';
import { AREA, WorldLayout } from '../engine/layout.js';
import { parseMeta } from '../engine/meta.js';
import { pauseProblem } from '../engine/pause.js';
import { limitNodeName, limitsPath, readRateLimit } from '../rate-limits/rate-store.js';
import { candidateSequence } from '../recipes/election/candidates.js';
import { DEFAULT_RETENTION, mergeRetention } from '../retention/settings.js';
import { validateSchedule } from '../schedules/schedule-spec.js';
import { LEADERS_ROOT, readStoredSchedule, schedulesPath } from '../schedules/schedule-store.js';
import { worldRoot } from '../tree/keys.js';
import {
  type Diagnosis,
  type Finding,
  type Got,
  isObject,
  missingIsNull,
  parseJson,
  type Verdict,
} from './doctor-findings.js';
import { recheckBy } from './doctor-recheck.js';

/*
 * The world's settings beside its tasks: the meta's retention and pause fields, schedules,
 * rate limits and elections. Each is read with the parser the engine reads it with, so a
 * finding here is exactly what the engine would refuse or ignore.
 */

/**
 * The world meta's bucket count, which every engine (this diagnosis's too) needs before it
 * reads anything else: a finding when `parseMeta` refuses it, `null` when it reads (or the
 * world does not exist: the engine says so itself). Neither `init` nor any other verb
 * rewrites it, so it is reported with the count the world's pending area shows.
 */
export async function diagnoseWorldMeta(
  coordinator: Coordinator,
  world: string,
): Promise<Finding | null> {
  const root = worldRoot(world);
  const got = await missingIsNull(coordinator.get(root));
  if (!got) return null;
  try {
    parseMeta(got.data, root);
    return null;
  } catch (err) {
    if (!isZoottError(err)) throw err;
  }
  const pendingRoot = new WorldLayout(world, 1).areaRoot(AREA.pending);
  const buckets = (await missingIsNull(coordinator.children(pendingRoot)))?.length;
  return {
    kind: 'corrupt',
    path: root,
    detail: `world meta: not {"zoott":1,"buckets":N}, so no engine, worker or verb can open world ${world} (nothing else was checked); write it again by hand${buckets ? ` ({"zoott":1,"buckets":${buckets}}: ${buckets} buckets under ${pendingRoot})` : ''} (not repaired: the bucket count is the world's layout)`,
    repair: 'none',
  };
}

/** The world meta (tree root data): its retention settings and its pause state. */
export async function diagnoseMeta(diagnosis: Diagnosis): Promise<void> {
  const root = diagnosis.ctx.layout.root;
  const got = await diagnosis.read(root);
  if (!got) return;
  // The bucket count was parsed already: the engine context could not exist without it.
  const parsed = parseJson(got.data);
  if (!parsed.ok || !isObject(parsed.value)) return;
  const meta = parsed.value;
  try {
    mergeRetention(DEFAULT_RETENTION, meta.retention, 'retention');
  } catch (err) {
    diagnosis.add(
      'corrupt',
      root,
      `world meta: ${(err as Error).message.replace(/^INVALID_CONFIG: /, '')}; the reaper cannot read the settings, so it removes nothing, and \`zoott retention\` refuses to change them until the field is written again by hand (not repaired: it is a setting)`,
      'none',
    );
  }
  const pause = pauseProblem(meta);
  if (pause)
    diagnosis.add(
      'corrupt',
      root,
      `world meta: ${pause}; workers do not hold the pause it was meant to be (what they cannot read counts as not paused); \`zoott pause\` or \`zoott resume\` writes it again (not repaired: it is a setting)`,
      'none',
    );
}

/** Schedules: each one what `readStoredSchedule` reads and `validateSchedule` accepts. */
export async function diagnoseSchedules(diagnosis: Diagnosis): Promise<void> {
  const dir = schedulesPath(diagnosis.ctx.layout.world);
  for (const name of await diagnosis.folder(dir)) {
    const path = `${dir}/${name}`;
    const got = await diagnosis.read(path);
    if (!got) continue;
    await diagnosis.checkAcl(path);
    const judge = (g: Got) => scheduleVerdict(dir, name, g);
    const verdict = judge(got);
    if (verdict)
      diagnosis.addVerdict(
        path,
        verdict,
        recheckBy(diagnosis.ctx, path, verdict.kind, null, judge),
      );
  }
}

function scheduleVerdict(dir: string, name: string, got: Got): Verdict | null {
  const stored = readStoredSchedule(got.data);
  // The scheduler and `schedule list` skip it: moving it changes nothing they do.
  if (typeof stored === 'string')
    return {
      kind: 'corrupt',
      detail: `schedule: ${stored}; the scheduler skips it`,
      repair: 'quarantine',
    };
  if (stored.name !== name)
    return {
      kind: 'corrupt',
      detail: `schedule: stored as ${name} but named ${JSON.stringify(stored.name)}; the scheduler records each tick at ${dir}/${stored.name}, not here (a version-checked set): it never ticks while no such schedule exists, and may overwrite that schedule when one does: \`zoott schedule remove ${name}\` and add it again (not repaired: it is a setting)`,
      repair: 'none',
    };
  try {
    const { createdAt: _c, lastTick: _l, ...spec } = stored;
    validateSchedule(spec);
    return null;
  } catch (err) {
    return {
      kind: 'corrupt',
      detail: `schedule: ${(err as Error).message.replace(/^INVALID_CONFIG: /, '')}; it never ticks: \`zoott schedule remove ${name}\` and add it again (not repaired: it is a setting)`,
      repair: 'none',
    };
  }
}

/** Rate limits: each one what `readRateLimit` reads, stored under its type's node name. */
export async function diagnoseLimits(diagnosis: Diagnosis): Promise<void> {
  const dir = limitsPath(diagnosis.ctx.layout.world);
  for (const name of await diagnosis.folder(dir)) {
    const path = `${dir}/${name}`;
    if (!(await diagnosis.ctx.coordinator.exists(path))) continue;
    diagnosis.tick();
    await diagnosis.checkAcl(path);
    // Read with the workers' own reader (after the node's version, which guards a move).
    const judge = () => limitVerdict(diagnosis.ctx, path, name);
    const verdict = await judge();
    if (verdict)
      diagnosis.addVerdict(
        path,
        verdict,
        recheckBy(diagnosis.ctx, path, verdict.kind, null, judge),
      );
  }
}

async function limitVerdict(ctx: EngineContext, path: string, name: string) {
  const limit = await readRateLimit(ctx, path);
  // Read as no limit: moving it changes nothing the workers do.
  if (!limit)
    return {
      kind: 'corrupt',
      detail: 'rate limit: not {type, rate} with a rate like 20/s; workers apply no limit for it',
      repair: 'quarantine',
    } satisfies Verdict;
  if (limitNodeName(limit.type) !== name)
    return {
      kind: 'corrupt',
      detail: `rate limit of type ${JSON.stringify(limit.type)} stored under another type's name; workers apply it, but \`zoott limit <world> <type> --remove\` cannot find it: set it again with \`zoott limit\` and remove this node by hand (not repaired: it is a setting)`,
      repair: 'none',
    } satisfies Verdict;
  return null;
}

/** Elections (the scheduler's): candidates are ephemeral, `{id}`. */
export async function diagnoseElections(diagnosis: Diagnosis): Promise<void> {
  const dir = `${LEADERS_ROOT}/${diagnosis.ctx.layout.world}`;
  for (const role of await diagnosis.folder(dir)) {
    const election = `${dir}/${role}`;
    for (const name of await diagnosis.folder(election)) {
      const path = `${election}/${name}`;
      const got = await diagnosis.read(path);
      if (!got) continue;
      await diagnosis.checkAcl(path);
      const judge = (g: Got) => candidateVerdict(name, g);
      const verdict = judge(got);
      if (verdict)
        diagnosis.addVerdict(
          path,
          verdict,
          recheckBy(diagnosis.ctx, path, verdict.kind, null, judge),
        );
    }
  }
}

function candidateVerdict(name: string, got: Got): Verdict | null {
  if (candidateSequence(name) === null) return null; // not a candidate: the election ignores it
  if (got.stat.ephemeralOwner === null)
    return {
      kind: 'not-ephemeral',
      detail:
        'an election candidate that no session owns (candidates are ephemeral); while it is first in line no live candidate leads, so no scheduler runs',
      repair: 'quarantine',
    };
  let id: unknown;
  try {
    id = decodeJson<{ id?: unknown } | null>(got.data, name)?.id;
  } catch {
    id = undefined;
  }
  if (typeof id === 'string') return null;
  return {
    kind: 'corrupt',
    detail:
      "election candidate: data is not {id}; it still stands (its session's), but is not shown as a contender",
    repair: 'none',
  };
}
