import type { Acl } from '../contract/acl.js';
import type { Coordinator, Stat } from '../contract/coordinator.js';
import { encodeJson, utf8 } from '../contract/paths.js';
import { KEY_SEPARATOR, worldRoot } from '../tree/keys.js';
import { INTERNAL_WORLD_MARK } from '../tree/names.js';
import { systemEngineClock } from './clock.js';
import type { EngineContext } from './context.js';
import { Diagnosis, type Finding, isObject, missingIsNull, parseJson } from './doctor-findings.js';
import { diagnoseProgress } from './doctor-progress.js';
import {
  diagnoseElections,
  diagnoseLimits,
  diagnoseMeta,
  diagnoseSchedules,
} from './doctor-settings.js';

export { diagnoseWorldMeta } from './doctor-settings.js';

import { codeOf } from './errors.js';
import { AREA, AREAS, type Area, parseEntryName } from './layout.js';
import { ensureNode } from './session.js';
import type { EngineClock } from './types.js';

export type { Finding, FindingKind } from './doctor-findings.js';

export interface DiagnoseOptions {
  /** The ACL the world should have (its credentials'); skips ACL checks when absent. */
  acl?: readonly Acl[] | null;
  /** Reply paths the world's jobs use, checked against `acl` with everything below them. */
  replyPaths?: readonly string[];
  /** Race state the world's races keep (`/zoott_r/races/<race>`), checked the same way. */
  racePaths?: readonly string[];
  /**
   * Look for race worlds whose world is gone (default true); off when diagnosing a race
   * world beside its world, which reports them already.
   */
  leftoverWorlds?: boolean;
}

/** Root of the quarantine area: `/zoott_q/<world>/item-<seq>`. */
export const QUARANTINE_ROOT = '/zoott_q';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
/**
 * Reads a whole world and reports what is damaged: corrupt data (tree nodes, entries,
 * records, registrations, progress nodes, schedules, rate limits, election candidates, the
 * meta's retention and pause settings), claims, registrations and candidates that are not
 * ephemeral, entries, records and progress of tasks without a tree node, progress left by
 * completed tasks, leaf tree nodes in no state, ACLs other than `options.acl` (every node
 * `lockDownWorld` locks), reply paths and race state not under it, and race worlds whose
 * world is gone. Reads only; `repairWorld` acts on the findings.
 */
export async function diagnoseWorld(
  ctx: EngineContext,
  options: DiagnoseOptions = {},
): Promise<Finding[]> {
  const d = new Diagnosis(ctx, options.acl ?? null);
  // The tree first: the areas are checked against the keys it has.
  await diagnoseTree(d);
  await diagnoseAreas(d);
  for (const key of d.leaves)
    if (!d.stated.has(key))
      d.add(
        'no-state',
        ctx.layout.treePath(key.split(KEY_SEPARATOR)),
        `task ${key} is in no state (no entry, claim or record): \`zoott queue\` it again or \`zoott cancel\` it`,
        'none',
      );
  await diagnoseRegistry(d);
  await diagnoseProgress(d);
  await diagnoseMeta(d);
  await diagnoseSchedules(d);
  await diagnoseLimits(d);
  await diagnoseElections(d);
  for (const path of [...(options.replyPaths ?? []), ...(options.racePaths ?? [])])
    await diagnoseReplyPath(d, path);
  if (options.leftoverWorlds ?? true) await diagnoseLeftoverWorlds(d);
  return d.found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The tree: every node with its data, and which keys exist. */
async function diagnoseTree(d: Diagnosis): Promise<void> {
  const { coordinator: c, layout } = d.ctx;
  await d.checkAcl(layout.root, 'weak-acl');
  let level: string[][] = [[]];
  while (level.length > 0) {
    const next: string[][] = [];
    await Promise.all(
      level.map(async (key) => {
        const names = (await missingIsNull(c.children(layout.treePath(key)))) ?? [];
        for (const n of names) next.push([...key, n]);
      }),
    );
    await Promise.all(
      next.map(async (key) => {
        const path = layout.treePath(key);
        const got = await missingIsNull(c.get(path));
        if (!got) return;
        const encoded = key.join(KEY_SEPARATOR);
        d.treeKeys.add(encoded);
        if (got.stat.numChildren === 0) d.leaves.push(encoded);
        const parsed = parseJson(got.data);
        if (!parsed.ok) d.add('corrupt', path, `tree node: ${parsed.why}`, 'none');
        else if (!isObject(parsed.value) || typeof parsed.value.type !== 'string')
          d.add('corrupt', path, 'tree node: not a task ({name, type, data})', 'none');
        await d.checkAcl(path, 'weak-acl');
      }),
    );
    level = next;
  }
}

/** What one node of each area holds, in findings. */
const AREA_NODE: Record<Area, string> = {
  [AREA.pending]: 'pending entry',
  [AREA.working]: 'claim',
  [AREA.completed]: 'completed record',
  [AREA.failed]: 'failed record',
};

/** The areas, bucket by bucket. */
async function diagnoseAreas(d: Diagnosis): Promise<void> {
  const { coordinator: c, layout } = d.ctx;
  for (const area of AREAS) await d.checkAcl(layout.areaRoot(area), 'weak-acl');
  await Promise.all(
    range(layout.buckets).map(async (b) => {
      for (const area of AREAS) {
        const dir = layout.bucketPath(area, b);
        await d.checkAcl(dir, 'weak-acl');
        const names = (await missingIsNull(c.children(dir))) ?? [];
        await Promise.all(names.map((name) => diagnoseAreaNode(d, area, dir, name)));
      }
    }),
  );
}

/** One node of an area: its name, whether it is ephemeral where it must be, its data. */
async function diagnoseAreaNode(d: Diagnosis, area: Area, dir: string, name: string) {
  const path = `${dir}/${name}`;
  const got = await missingIsNull(d.ctx.coordinator.get(path));
  if (!got) return;
  await d.checkAcl(path, 'weak-acl');
  const key = area === AREA.pending ? parseEntryName(name)?.encodedKey : name;
  if (key === undefined) {
    d.add('corrupt', path, 'pending area: not an entry name; the engine skips it', 'quarantine');
    return;
  }
  if (area === AREA.working && got.stat.ephemeralOwner === null) {
    d.add(
      'not-ephemeral',
      path,
      'a claim that no session owns (claims are ephemeral); the engine ignores it and replaces it on the next claim',
      'quarantine',
    );
    return;
  }
  const parsed = parseJson(got.data);
  const what = AREA_NODE[area];
  if (!parsed.ok || !isObject(parsed.value)) {
    d.add(
      'corrupt',
      path,
      `${what}: ${parsed.ok ? 'not a JSON object' : parsed.why}`,
      area === AREA.working ? 'none' : 'quarantine',
    );
    return;
  }
  if (area === AREA.pending) {
    const e = parsed.value;
    if (
      typeof e.name !== 'string' ||
      typeof e.type !== 'string' ||
      !Number.isInteger(e.attempts) ||
      !Number.isInteger(e.maxAttempts)
    ) {
      d.add(
        'corrupt',
        path,
        'pending entry: wrong shape (name, type, attempts, maxAttempts)',
        'quarantine',
      );
      return;
    }
  }
  d.stated.add(key);
  if (area === AREA.completed) d.completed.add(key);
  else if (area === AREA.pending) d.attempts.set(key, parsed.value.attempts as number);
  if (!d.treeKeys.has(key))
    d.add('orphan', path, `${what} of task ${key}, which has no tree node`, 'quarantine');
}

/** The worker registry: registrations are ephemeral JSON. */
async function diagnoseRegistry(d: Diagnosis): Promise<void> {
  const { coordinator: c, layout } = d.ctx;
  await d.checkAcl(layout.registry, 'weak-acl');
  for (const name of (await missingIsNull(c.children(layout.registry))) ?? []) {
    const path = `${layout.registry}/${name}`;
    const got = await missingIsNull(c.get(path));
    if (!got) continue;
    await d.checkAcl(path);
    if (got.stat.ephemeralOwner === null)
      d.add(
        'not-ephemeral',
        path,
        'a worker registration that no session owns (registrations are ephemeral); workers ignore it',
        'quarantine',
      );
    else if (!parseJson(got.data).ok)
      d.add('corrupt', path, 'worker registration: data is not JSON', 'none');
  }
}

/** A reply path, with everything below it. */
async function diagnoseReplyPath(d: Diagnosis, path: string): Promise<void> {
  await d.checkAcl(path, 'reply-acl');
  for (const n of (await missingIsNull(d.ctx.coordinator.children(path))) ?? [])
    await diagnoseReplyPath(d, `${path}/${n}`);
}

/** Race worlds whose world is gone. */
async function diagnoseLeftoverWorlds(d: Diagnosis): Promise<void> {
  const c = d.ctx.coordinator;
  // The namespace root may be closed to these credentials: then there is nothing to say.
  const top = await c
    .children('/')
    .catch((err) => (codeOf(err) === 'NO_AUTH' ? [] : Promise.reject(err)));
  for (const name of top) {
    // An internal world is `<world><mark><purpose>` (see internalWorldName).
    const at = name.startsWith('zoott_') ? name.lastIndexOf(INTERNAL_WORLD_MARK) : -1;
    const owner = at > 'zoott_'.length ? name.slice('zoott_'.length, at) : null;
    if (owner !== null && (await c.exists(worldRoot(owner))) === null)
      d.add(
        'leftover-world',
        `/${name}`,
        `internal world of ${owner}, which no longer exists; remove it (and /zoott_{p,w,c,f,workers}/${name.slice('zoott_'.length)}) once nothing runs there`,
        'none',
      );
  }
}

/** A node moved to the quarantine area. */
export interface Quarantined {
  from: string;
  to: string;
}

/**
 * Moves every `quarantine` finding to `/zoott_q/<world>/item-<seq>`: ONE multi per node
 * creates the quarantine node (its data: the original path, the finding and the bytes as
 * text) and deletes the original at the version read, so nothing is lost and a node that
 * changed meanwhile is left alone. Nothing is deleted outright.
 */
export async function repairWorld(
  c: Coordinator,
  world: string,
  findings: readonly Finding[],
  /** Stamps `movedAt`; the engine's clock when there is one. */
  clock: Pick<EngineClock, 'now'> = systemEngineClock,
): Promise<Quarantined[]> {
  const dir = `${QUARANTINE_ROOT}/${world}`;
  await ensureNode(c, QUARANTINE_ROOT);
  await ensureNode(c, dir);
  const moved: Quarantined[] = [];
  for (const f of findings) {
    if (f.repair !== 'quarantine') continue;
    let got: { data: Uint8Array; stat: Stat };
    try {
      got = await c.get(f.path);
    } catch (err) {
      if (codeOf(err) === 'NO_NODE') continue; // gone already
      throw err;
    }
    const record = {
      from: f.path,
      kind: f.kind,
      detail: f.detail,
      movedAt: clock.now(),
      ephemeralOwner: got.stat.ephemeralOwner,
      data: utf8.decode(got.data),
    };
    try {
      const results = await c.multi([
        { op: 'create', path: `${dir}/item-`, data: encodeJson(record), sequential: true },
        { op: 'delete', path: f.path, version: got.stat.version },
      ]);
      const created = results[0];
      moved.push({ from: f.path, to: created?.op === 'create' ? created.path : dir });
    } catch (err) {
      // Changed or gone since it was read: not this repair's to move.
      if (codeOf(err) === 'BAD_VERSION' || codeOf(err) === 'NO_NODE') continue;
      throw err;
    }
  }
  return moved;
}
