import type { Coordinator } from '../contract/coordinator.js';
import { isZoottError } from '../contract/errors.js';
import { decodeJson } from '../contract/paths.js';
import { limitNodeName, limitsPath, readRateLimit } from '../rate-limits/rate-store.js';
import { candidateSequence } from '../recipes/election/candidates.js';
import { validateSchedule } from '../schedules/schedule-spec.js';
import { LEADERS_ROOT, readStoredSchedule, schedulesPath } from '../schedules/schedule-store.js';
import { worldRoot } from '../tree/keys.js';
import {
  type Diagnosis,
  type Finding,
  isObject,
  missingIsNull,
  parseJson,
} from './doctor-findings.js';
import { AREA } from './layout.js';
import { parseMeta } from './meta.js';
import { pauseProblem } from './pause.js';
import { DEFAULT_RETENTION, mergeRetention } from './retention/settings.js';

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
export async function diagnoseWorldMeta(c: Coordinator, world: string): Promise<Finding | null> {
  const root = worldRoot(world);
  const got = await missingIsNull(c.get(root));
  if (!got) return null;
  try {
    parseMeta(got.data, root);
    return null;
  } catch (err) {
    if (!isZoottError(err)) throw err;
  }
  const buckets = (await missingIsNull(c.children(`/zoott_${AREA.pending}/${world}`)))?.length;
  return {
    kind: 'corrupt',
    path: root,
    detail: `world meta: not {"zoott":1,"buckets":N}, so no engine, worker or verb can open world ${world} (nothing else was checked); write it again by hand${buckets ? ` ({"zoott":1,"buckets":${buckets}}: ${buckets} buckets under /zoott_${AREA.pending}/${world})` : ''} (not repaired: the bucket count is the world's layout)`,
    repair: 'none',
  };
}

/** The world meta (tree root data): its retention settings and its pause state. */
export async function diagnoseMeta(d: Diagnosis): Promise<void> {
  const root = d.ctx.layout.root;
  const got = await missingIsNull(d.ctx.coordinator.get(root));
  if (!got) return;
  // The bucket count was parsed already: the engine context could not exist without it.
  const parsed = parseJson(got.data);
  if (!parsed.ok || !isObject(parsed.value)) return;
  const meta = parsed.value;
  try {
    mergeRetention(DEFAULT_RETENTION, meta.retention, 'retention');
  } catch (err) {
    d.add(
      'corrupt',
      root,
      `world meta: ${(err as Error).message.replace(/^INVALID_CONFIG: /, '')}; the reaper cannot read the settings, so it removes nothing, and \`zoott retention\` refuses to change them until the field is written again by hand (not repaired: it is a setting)`,
      'none',
    );
  }
  const pause = pauseProblem(meta);
  if (pause)
    d.add(
      'corrupt',
      root,
      `world meta: ${pause}; workers do not hold the pause it was meant to be (what they cannot read counts as not paused); \`zoott pause\` or \`zoott resume\` writes it again (not repaired: it is a setting)`,
      'none',
    );
}

/** Schedules: each one what `readStoredSchedule` reads and `validateSchedule` accepts. */
export async function diagnoseSchedules(d: Diagnosis): Promise<void> {
  const c = d.ctx.coordinator;
  const dir = schedulesPath(d.ctx.layout.world);
  for (const name of await d.folder(dir)) {
    const path = `${dir}/${name}`;
    const got = await missingIsNull(c.get(path));
    if (!got) continue;
    await d.checkAcl(path);
    const stored = readStoredSchedule(got.data);
    if (typeof stored === 'string') {
      // The scheduler and `schedule list` skip it: moving it changes nothing they do.
      d.add('corrupt', path, `schedule: ${stored}; the scheduler skips it`, 'quarantine');
      continue;
    }
    if (stored.name !== name) {
      d.add(
        'corrupt',
        path,
        `schedule: stored as ${name} but named ${JSON.stringify(stored.name)}; the scheduler records each tick at ${dir}/${stored.name}, not here (a version-checked set): it never ticks while no such schedule exists, and may overwrite that schedule when one does: \`zoott schedule remove ${name}\` and add it again (not repaired: it is a setting)`,
        'none',
      );
      continue;
    }
    try {
      const { createdAt: _c, lastTick: _l, ...spec } = stored;
      validateSchedule(spec);
    } catch (err) {
      d.add(
        'corrupt',
        path,
        `schedule: ${(err as Error).message.replace(/^INVALID_CONFIG: /, '')}; it never ticks: \`zoott schedule remove ${name}\` and add it again (not repaired: it is a setting)`,
        'none',
      );
    }
  }
}

/** Rate limits: each one what `readRateLimit` reads, stored under its type's node name. */
export async function diagnoseLimits(d: Diagnosis): Promise<void> {
  const dir = limitsPath(d.ctx.layout.world);
  for (const name of await d.folder(dir)) {
    const path = `${dir}/${name}`;
    if (!(await d.ctx.coordinator.exists(path))) continue;
    await d.checkAcl(path);
    const limit = await readRateLimit(d.ctx, path);
    if (!limit) {
      // Read as no limit: moving it changes nothing the workers do.
      d.add(
        'corrupt',
        path,
        'rate limit: not {type, rate} with a rate like 20/s; workers apply no limit for it',
        'quarantine',
      );
    } else if (limitNodeName(limit.type) !== name) {
      d.add(
        'corrupt',
        path,
        `rate limit of type ${JSON.stringify(limit.type)} stored under another type's name; workers apply it, but \`zoott limit <world> <type> --remove\` cannot find it: set it again with \`zoott limit\` and remove this node by hand (not repaired: it is a setting)`,
        'none',
      );
    }
  }
}

/** Elections (the scheduler's): candidates are ephemeral, `{id}`. */
export async function diagnoseElections(d: Diagnosis): Promise<void> {
  const c = d.ctx.coordinator;
  const dir = `${LEADERS_ROOT}/${d.ctx.layout.world}`;
  for (const role of await d.folder(dir)) {
    const election = `${dir}/${role}`;
    for (const name of await d.folder(election)) {
      const path = `${election}/${name}`;
      const got = await missingIsNull(c.get(path));
      if (!got) continue;
      await d.checkAcl(path);
      if (candidateSequence(name) === null) continue; // not a candidate: the election ignores it
      if (got.stat.ephemeralOwner === null) {
        d.add(
          'not-ephemeral',
          path,
          'an election candidate that no session owns (candidates are ephemeral); while it is first in line no live candidate leads, so no scheduler runs',
          'quarantine',
        );
        continue;
      }
      let id: unknown;
      try {
        id = decodeJson<{ id?: unknown } | null>(got.data, path)?.id;
      } catch {
        id = undefined;
      }
      if (typeof id !== 'string')
        d.add(
          'corrupt',
          path,
          "election candidate: data is not {id}; it still stands (its session's), but is not shown as a contender",
          'none',
        );
    }
  }
}
