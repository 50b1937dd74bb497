import type { Acl } from '../contract/acl.js';
import { principalOf } from '../engine/acl-principal.js';
import type { EngineContext } from '../engine/context.js';
import { codeOf } from '../engine/errors.js';
import {
  AREA,
  AREAS,
  type Area,
  areaParent,
  parseEntryName,
  REGISTRY_AREA,
  topNodeName,
} from '../engine/layout.js';
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

/** What `diagnoseWorld` holds a world against, and how it reports its progress. */
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
  const diagnosis = new Diagnosis(
    ctx,
    requested,
    options.onProgress,
    principalOf(worldAcl),
    worldAcl,
    chroot,
  );
  const parts: [string, () => Promise<void>][] = [
    ['namespace', () => diagnoseNamespace(diagnosis, chroot)],
    ['progress', () => diagnoseProgress(diagnosis)],
    ['areas', () => diagnoseAreas(diagnosis)],
    ['tree', () => diagnoseTree(diagnosis)],
    ['registry', () => diagnoseRegistry(diagnosis)],
    ['settings', () => diagnoseMeta(diagnosis)],
    ['schedules', () => diagnoseSchedules(diagnosis)],
    ['limits', () => diagnoseLimits(diagnosis)],
    ['elections', () => diagnoseElections(diagnosis)],
    ['reply paths', () => diagnoseSubtree(diagnosis, ctx.layout.areaRoot(AREA_NAMES.replies))],
    ['races', () => diagnoseSubtree(diagnosis, ctx.layout.areaRoot(AREA_NAMES.races))],
    ['parked results', () => diagnoseParked(diagnosis)],
  ];
  if (options.leftoverWorlds ?? true)
    parts.push(['race worlds', () => diagnoseLeftoverWorlds(diagnosis)]);
  for (const [index, [name, run]] of parts.entries()) {
    diagnosis.startPart(name, index, parts.length);
    await run();
    // What waited for the tree: orphans, stale progress, tasks in no state.
    if (name === 'tree') relateToTasks(diagnosis);
  }
  diagnosis.startPart('done', parts.length, parts.length);
  return diagnosis.found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The findings that compare a task's nodes with its tree node, once the tree is read. */
function relateToTasks(diagnosis: Diagnosis): void {
  for (const { path, area, name, key } of diagnosis.keyed)
    if (!diagnosis.hasTree(key))
      diagnosis.addVerdict(
        path,
        orphanOf(area, key),
        recheckBy(diagnosis.ctx, path, 'orphan', key, judgeArea(area, name)),
      );
  for (const node of diagnosis.progress) {
    const verdict = progressRelation(node.key, node.attempt, diagnosis);
    if (verdict)
      diagnosis.addVerdict(node.path, verdict, progressRecheck(diagnosis.ctx, node, verdict.kind));
  }
  for (const key of diagnosis.leaves)
    if (!diagnosis.stated.has(key))
      diagnosis.add(
        'no-state',
        diagnosis.ctx.layout.treePath(key.split(KEY_SEPARATOR)),
        `task ${key} is in no state (no entry, claim or record): \`zoott queue\` it again or \`zoott cancel\` it (a task queued while doctor read the world shows so too: look again)`,
        'none',
      );
}

/** The tree: every node with its data, and which keys exist. */
async function diagnoseTree(diagnosis: Diagnosis): Promise<void> {
  const { layout } = diagnosis.ctx;
  await diagnosis.checkAcl(layout.root, 'weak-acl');
  let level: string[][] = [[]];
  while (level.length > 0) {
    const next: string[][] = [];
    await Promise.all(
      level.map(async (key) => {
        const names = await diagnosis.list(layout.treePath(key));
        for (const name of names) next.push([...key, name]);
      }),
    );
    await Promise.all(
      next.map(async (key) => {
        const path = layout.treePath(key);
        const got = await diagnosis.read(path);
        if (!got) return;
        const encoded = key.join(KEY_SEPARATOR);
        diagnosis.treeKeys.add(encoded);
        if (got.stat.numChildren === 0) diagnosis.leaves.push(encoded);
        const parsed = parseJson(got.data);
        if (!parsed.ok) diagnosis.add('corrupt', path, `tree node: ${parsed.why}`, 'none');
        else if (!isObject(parsed.value) || typeof parsed.value.type !== 'string')
          diagnosis.add('corrupt', path, 'tree node: not a task ({name, type, data})', 'none');
        await diagnosis.checkAcl(path, 'weak-acl');
      }),
    );
    level = next;
  }
}

/** The areas, bucket by bucket. */
async function diagnoseAreas(diagnosis: Diagnosis): Promise<void> {
  const { layout } = diagnosis.ctx;
  for (const area of AREAS) await diagnosis.checkAcl(layout.areaRoot(area), 'weak-acl');
  await Promise.all(
    range(layout.buckets).map(async (bucketNo) => {
      for (const area of AREAS) {
        const dir = layout.bucketPath(area, bucketNo);
        await diagnosis.checkAcl(dir, 'weak-acl');
        const names = await diagnosis.list(dir);
        await Promise.all(names.map((name) => diagnoseAreaNode(diagnosis, area, dir, name)));
      }
    }),
  );
}

/** One node of an area: its own findings now, its orphan check once the tree is read. */
async function diagnoseAreaNode(diagnosis: Diagnosis, area: Area, dir: string, name: string) {
  const path = `${dir}/${name}`;
  const got = await diagnosis.read(path);
  if (!got) return;
  await diagnosis.checkAcl(path, 'weak-acl');
  const node = areaNode(area, name, got);
  if ('kind' in node) {
    const key = area === AREA.pending ? (parseEntryName(name)?.encodedKey ?? null) : name;
    diagnosis.addVerdict(
      path,
      node,
      recheckBy(diagnosis.ctx, path, node.kind, key, judgeArea(area, name)),
    );
    return;
  }
  diagnosis.stated.add(node.key);
  if (area === AREA.completed) diagnosis.completedKeys.add(node.key);
  else if (node.attempts !== undefined)
    diagnosis.attemptsOf.set(
      node.key,
      Math.max(diagnosis.attemptsOf.get(node.key) ?? 0, node.attempts),
    );
  diagnosis.keyed.push({ path, area, name, key: node.key });
}

/** The worker registry: registrations are ephemeral JSON. */
async function diagnoseRegistry(diagnosis: Diagnosis): Promise<void> {
  const { layout } = diagnosis.ctx;
  await diagnosis.checkAcl(layout.registry, 'weak-acl');
  for (const name of await diagnosis.list(layout.registry)) {
    const path = `${layout.registry}/${name}`;
    const got = await diagnosis.read(path);
    if (!got) continue;
    await diagnosis.checkAcl(path);
    const verdict = registrationVerdict(got);
    if (verdict)
      diagnosis.addVerdict(
        path,
        verdict,
        recheckBy(diagnosis.ctx, path, verdict.kind, null, registrationVerdict),
      );
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
async function diagnoseLeftoverWorlds(diagnosis: Diagnosis): Promise<void> {
  const coordinator = diagnosis.ctx.coordinator;
  // The namespace root may be closed to these credentials: then there is nothing to say.
  const top = await coordinator
    .children('/')
    .catch((err) => (codeOf(err) === 'NO_AUTH' ? [] : Promise.reject(err)));
  for (const child of top) {
    // An internal world is `<world><mark><purpose>` (see internalWorldName).
    const name = topNodeName(child);
    const at = name === null ? -1 : name.lastIndexOf(INTERNAL_WORLD_MARK);
    const owner = name !== null && at > 0 ? name.slice(0, at) : null;
    if (name !== null && owner !== null && (await coordinator.exists(worldRoot(owner))) === null) {
      const areas = [...AREAS, REGISTRY_AREA].map((area) => `${areaParent(area)}/${name}`);
      diagnosis.add(
        'leftover-world',
        `/${child}`,
        `internal world of ${owner}, which no longer exists; remove it (and ${areas.join(', ')}) once nothing runs there`,
        'none',
      );
    }
  }
}
