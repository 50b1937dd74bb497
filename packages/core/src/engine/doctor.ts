import type { Acl } from '../contract/acl.js';
import type { Coordinator, Stat } from '../contract/coordinator.js';
import { encodeJson, utf8 } from '../contract/paths.js';
import { KEY_SEPARATOR, worldRoot } from '../tree/keys.js';
import { INTERNAL_WORLD_MARK } from '../tree/names.js';
import { systemEngineClock } from './clock.js';
import type { EngineContext } from './context.js';
import { codeOf } from './errors.js';
import { AREA, AREAS, type Area, parseEntryName } from './layout.js';
import { ensureNode } from './session.js';
import type { EngineClock } from './types.js';
import { describeAcl, sameAcl } from './world-acl.js';

/** What kind of damage a finding is. */
export type FindingKind =
  /** Data that is not JSON, or JSON of the wrong shape, where zoott reads its own records. */
  | 'corrupt'
  /** A persistent node where zoott only writes ephemeral ones (a claim, a registration). */
  | 'not-ephemeral'
  /** A pending entry or a record whose task has no tree node. */
  | 'orphan'
  /** A leaf tree node with no pending entry, claim or record: a task in no state. */
  | 'no-state'
  /** A node whose ACL is not the world's. */
  | 'weak-acl'
  /** A reply path (or a node under it) whose ACL is not the world's. */
  | 'reply-acl'
  /** An internal world (a race world) whose world is gone. */
  | 'leftover-world';

/** One problem `diagnoseWorld` found. */
export interface Finding {
  kind: FindingKind;
  path: string;
  /** What is wrong, in words. */
  detail: string;
  /**
   * `quarantine`: `repairWorld` moves it to the quarantine area (it is safe to move: the
   * engine ignores it or it blocks a task). `none`: reported only, with what to do in
   * `detail` (it is user data, or another verb fixes it).
   */
  repair: 'quarantine' | 'none';
}

export interface DiagnoseOptions {
  /** The ACL the world should have (its credentials'); skips ACL checks when absent. */
  acl?: readonly Acl[] | null;
  /** Reply paths the world's jobs use, checked against `acl` with everything below them. */
  replyPaths?: readonly string[];
}

/** Root of the quarantine area: `/zoott_q/<world>/item-<seq>`. */
export const QUARANTINE_ROOT = '/zoott_q';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const missingIsNull = <T>(p: Promise<T>): Promise<T | null> =>
  p.catch((err) => (codeOf(err) === 'NO_NODE' ? null : Promise.reject(err)));

function parseJson(data: Uint8Array): { ok: true; value: unknown } | { ok: false; why: string } {
  try {
    return { ok: true, value: JSON.parse(utf8.decode(data)) };
  } catch (err) {
    return { ok: false, why: `data is not JSON (${(err as Error).message})` };
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The findings of one diagnosis, and the checks every part of it shares. */
class Diagnosis {
  readonly found: Finding[] = [];
  /** Keys of the tree's tasks, and those of them that are leaves. */
  readonly treeKeys = new Set<string>();
  readonly leaves: string[] = [];
  /** Keys that have an entry, a claim or a record. */
  readonly stated = new Set<string>();

  constructor(
    readonly ctx: EngineContext,
    private readonly acl: readonly Acl[] | null,
  ) {}

  add(kind: FindingKind, path: string, detail: string, repair: Finding['repair']): void {
    this.found.push({ kind, path, detail, repair });
  }

  /** Reports `path` when its ACL is not the world's (no check without one). */
  async checkAcl(path: string, kind: 'weak-acl' | 'reply-acl'): Promise<void> {
    const acl = this.acl;
    if (!acl) return;
    const got = await missingIsNull(this.ctx.coordinator.getAcl(path));
    if (got && !sameAcl(got.acl, acl))
      this.add(
        kind,
        path,
        `ACL is ${describeAcl(got.acl)}, not the world's ${describeAcl(acl)}; \`zoott lock-down\` fixes it`,
        'none',
      );
  }
}

/**
 * Reads a whole world and reports what is damaged: corrupt data, claims and registrations
 * that are not ephemeral, entries and records of tasks without a tree node, leaf tree nodes
 * in no state, ACLs other than `options.acl`, reply paths not under it, and race worlds
 * whose world is gone. Reads only; `repairWorld` acts on the findings.
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
  for (const path of options.replyPaths ?? []) await diagnoseReplyPath(d, path);
  await diagnoseLeftoverWorlds(d);
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
