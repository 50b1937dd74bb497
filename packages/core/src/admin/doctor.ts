import type { Acl } from '../contract/acl.js';
import { principalOf } from '../engine/acl-principal.js';
import type { EngineContext } from '../engine/context.js';
import { codeOf } from '../engine/errors.js';
import { AREA, AREAS, type Area, parseEntryName } from '../engine/layout.js';
import { AREA_NAMES } from '../tree/areas.js';
import { KEY_SEPARATOR, worldRoot } from '../tree/keys.js';
import { INTERNAL_WORLD_MARK } from '../tree/names.js';
import { areaNode, judgeArea, orphanOf } from './doctor-areas.js';
import {
  Diagnosis,
  type DiagnosisProgress,
  type Finding,
  type Got,
  isObject,
  parseJson,
  type Verdict,
} from './doctor-findings.js';
import { diagnoseNamespace, diagnoseSubtree } from './doctor-namespace.js';
import { diagnoseParked } from './doctor-parked.js';
import { diagnoseProgress, progressRecheck, progressRelation } from './doctor-progress.js';
import { recheckBy } from './doctor-recheck.js';
import {
  diagnoseElections,
  diagnoseLimits,
  diagnoseMeta,
  diagnoseSchedules,
} from './doctor-settings.js';

export type { DiagnosisProgress, Finding, FindingKind } from './doctor-findings.js';
export {
  type NotMoved,
  QUARANTINE_ROOT,
  type Quarantined,
  type RepairOutcome,
  repairWorld,
} from './doctor-repair.js';
export { diagnoseWorldMeta } from './doctor-settings.js';

export interface DiagnoseOptions {
  /**
   * The ACL the world should have (its credentials'): nodes with another are reported
   * (`weak-acl`), and nodes that deny its identities what it gives them (`squatted`).
   * Without it the world is held to its tree root's ACL, for squatting only.
   */
  acl?: readonly Acl[] | null;
  /** The connect string's chroot, for the full paths in the commands of `admin` findings. */
  chroot?: string;
  /**
   * Look for race worlds whose world is gone (default true); off when diagnosing a race
   * world beside its world, which reports them already.
   */
  leftoverWorlds?: boolean;
  /** Called as the diagnosis goes: after each node it reads and as each part starts. */
  onProgress?: (progress: DiagnosisProgress) => void;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
/**
 * Reads a whole world and reports what is damaged: corrupt data (tree nodes, entries,
 * records, registrations, progress nodes, schedules, rate limits, election candidates, the
 * meta's retention and pause settings), claims, registrations and candidates that are not
 * ephemeral, entries, records and progress of tasks without a tree node, progress left by
 * completed tasks, leaf tree nodes in no state, ACLs other than `options.acl` (every node
 * `lockDownWorld` locks), reply paths and race state not under it, nodes that deny the
 * world's principal what its ACL gives it (squatted: someone else made or changed them),
 * shared area nodes that someone may change, nodes the world needs that are missing, results
 * the AMQP bridge parked, and
 * race worlds whose world is gone. Reads only; `repairWorld` acts on the findings.
 *
 * A task's other nodes are written with or after its tree node and deleted with or before
 * it (queue writes both in one multi, cancel and the reaper delete both in one), so they are
 * read first (progress, then the areas) and the tree last: a node of a live task then always
 * finds its tree node, even on a busy world. A finding may still be about a node that went
 * (a task cancelled or reaped between the reads), and a task queued or moving on while its
 * nodes are read may show as in no state, which `repairWorld` never acts on.
 */
export async function diagnoseWorld(
  ctx: EngineContext,
  options: DiagnoseOptions = {},
): Promise<Finding[]> {
  const requested = options.acl ?? null;
  const worldAcl = requested ?? (await ctx.coordinator.getAcl(ctx.layout.root)).acl;
  const chroot = options.chroot ?? '';
  const d = new Diagnosis(
    ctx,
    requested,
    options.onProgress,
    principalOf(worldAcl),
    worldAcl,
    chroot,
  );
  const parts: [string, () => Promise<void>][] = [
    ['namespace', () => diagnoseNamespace(d, chroot)],
    ['progress', () => diagnoseProgress(d)],
    ['areas', () => diagnoseAreas(d)],
    ['tree', () => diagnoseTree(d)],
    ['registry', () => diagnoseRegistry(d)],
    ['settings', () => diagnoseMeta(d)],
    ['schedules', () => diagnoseSchedules(d)],
    ['limits', () => diagnoseLimits(d)],
    ['elections', () => diagnoseElections(d)],
    ['reply paths', () => diagnoseSubtree(d, ctx.layout.areaRoot(AREA_NAMES.replies))],
    ['races', () => diagnoseSubtree(d, ctx.layout.areaRoot(AREA_NAMES.races))],
    ['parked results', () => diagnoseParked(d)],
  ];
  if (options.leftoverWorlds ?? true) parts.push(['race worlds', () => diagnoseLeftoverWorlds(d)]);
  for (const [i, [name, run]] of parts.entries()) {
    d.startPart(name, i, parts.length);
    await run();
    // What waited for the tree: orphans, stale progress, tasks in no state.
    if (name === 'tree') relateToTasks(d);
  }
  d.startPart('done', parts.length, parts.length);
  return d.found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The findings that compare a task's nodes with its tree node, once the tree is read. */
function relateToTasks(d: Diagnosis): void {
  for (const { path, area, name, key } of d.keyed)
    if (!d.hasTree(key))
      d.addVerdict(
        path,
        orphanOf(area, key),
        recheckBy(d.ctx, path, 'orphan', key, judgeArea(area, name)),
      );
  for (const node of d.progress) {
    const verdict = progressRelation(node.key, node.attempt, d);
    if (verdict) d.addVerdict(node.path, verdict, progressRecheck(d.ctx, node, verdict.kind));
  }
  for (const key of d.leaves)
    if (!d.stated.has(key))
      d.add(
        'no-state',
        d.ctx.layout.treePath(key.split(KEY_SEPARATOR)),
        `task ${key} is in no state (no entry, claim or record): \`zoott queue\` it again or \`zoott cancel\` it (a task queued while doctor read the world shows so too: look again)`,
        'none',
      );
}

/** The tree: every node with its data, and which keys exist. */
async function diagnoseTree(d: Diagnosis): Promise<void> {
  const { layout } = d.ctx;
  await d.checkAcl(layout.root, 'weak-acl');
  let level: string[][] = [[]];
  while (level.length > 0) {
    const next: string[][] = [];
    await Promise.all(
      level.map(async (key) => {
        const names = await d.list(layout.treePath(key));
        for (const n of names) next.push([...key, n]);
      }),
    );
    await Promise.all(
      next.map(async (key) => {
        const path = layout.treePath(key);
        const got = await d.read(path);
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

/** The areas, bucket by bucket. */
async function diagnoseAreas(d: Diagnosis): Promise<void> {
  const { layout } = d.ctx;
  for (const area of AREAS) await d.checkAcl(layout.areaRoot(area), 'weak-acl');
  await Promise.all(
    range(layout.buckets).map(async (b) => {
      for (const area of AREAS) {
        const dir = layout.bucketPath(area, b);
        await d.checkAcl(dir, 'weak-acl');
        const names = await d.list(dir);
        await Promise.all(names.map((name) => diagnoseAreaNode(d, area, dir, name)));
      }
    }),
  );
}

/** One node of an area: its own findings now, its orphan check once the tree is read. */
async function diagnoseAreaNode(d: Diagnosis, area: Area, dir: string, name: string) {
  const path = `${dir}/${name}`;
  const got = await d.read(path);
  if (!got) return;
  await d.checkAcl(path, 'weak-acl');
  const node = areaNode(area, name, got);
  if ('kind' in node) {
    const key = area === AREA.pending ? (parseEntryName(name)?.encodedKey ?? null) : name;
    d.addVerdict(path, node, recheckBy(d.ctx, path, node.kind, key, judgeArea(area, name)));
    return;
  }
  d.stated.add(node.key);
  if (area === AREA.completed) d.completedKeys.add(node.key);
  else if (node.attempts !== undefined)
    d.attemptsOf.set(node.key, Math.max(d.attemptsOf.get(node.key) ?? 0, node.attempts));
  d.keyed.push({ path, area, name, key: node.key });
}

/** The worker registry: registrations are ephemeral JSON. */
async function diagnoseRegistry(d: Diagnosis): Promise<void> {
  const { layout } = d.ctx;
  await d.checkAcl(layout.registry, 'weak-acl');
  for (const name of await d.list(layout.registry)) {
    const path = `${layout.registry}/${name}`;
    const got = await d.read(path);
    if (!got) continue;
    await d.checkAcl(path);
    const verdict = registrationVerdict(got);
    if (verdict)
      d.addVerdict(path, verdict, recheckBy(d.ctx, path, verdict.kind, null, registrationVerdict));
  }
}

function registrationVerdict(got: Got): Verdict | null {
  if (got.stat.ephemeralOwner === null)
    return {
      kind: 'not-ephemeral',
      detail:
        'a worker registration that no session owns (registrations are ephemeral); workers ignore it',
      repair: 'quarantine',
    };
  if (!parseJson(got.data).ok)
    return { kind: 'corrupt', detail: 'worker registration: data is not JSON', repair: 'none' };
  return null;
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
