import type { Op, Stat } from '../contract/coordinator.js';
import type { EngineContext } from '../engine/context.js';
import { AREA, parseEntryName } from '../engine/layout.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import {
  type Got,
  missingIsNull,
  parseJson,
  type Recheck,
  type TaskFacts,
  type Verdict,
} from './doctor-findings.js';

/*
 * `repairWorld` moves a node only if its finding, made again from fresh reads, still holds,
 * and only in a multi that fails if anything that finding rests on changed after those reads:
 * the node (deleted at the version read) and, for a node of a task, the task's tree node and
 * pending entries. So a move can never take a node that is valid at the moment of the move:
 * e.g. an "orphan" entry whose task was queued while the diagnosis read the world.
 */

/** One task's facts, read fresh, with the ops that fail a multi if any of them changed. */
export interface FreshFacts extends TaskFacts {
  guard: Op[];
}

/** A name ZooKeeper refuses as a path element: no tree node can have it. */
const impossibleName = (n: string) => n === '' || n === '.' || n === '..';

/**
 * The facts about task `encoded` (its tree node, pending entries and completed record), read
 * now, and the guard: the tree node checked at its version, or its absence asserted (a create
 * and a delete of the highest missing node on its path, which fails if a queue made it); every
 * pending entry checked at its version (a claim, a completion, a failure or a retry changes or
 * deletes it, and a new entry comes only by a queue, which writes the tree node); the completed
 * record checked at its version.
 */
export async function readTaskFacts(ctx: EngineContext, encoded: string): Promise<FreshFacts> {
  const { coordinator, layout } = ctx;
  const key = encoded.split(KEY_SEPARATOR);
  const guard: Op[] = [];
  const check = (path: string, stat: Stat) =>
    guard.push({ op: 'check', path, version: stat.version });

  let tree: Stat | null = null;
  if (!key.some(impossibleName)) {
    tree = await coordinator.exists(layout.treePath(key));
    if (tree) check(layout.treePath(key), tree);
    else
      for (let n = 1; n <= key.length; n++) {
        const path = layout.treePath(key.slice(0, n));
        if ((await coordinator.exists(path)) !== null) continue;
        guard.push({ op: 'create', path }, { op: 'delete', path });
        break;
      }
  }

  let attempts: number | undefined;
  const dir = layout.bucketPath(AREA.pending, layout.bucketOf(key));
  for (const name of (await missingIsNull(coordinator.children(dir))) ?? []) {
    if (parseEntryName(name)?.encodedKey !== encoded) continue;
    const got = await missingIsNull(coordinator.get(`${dir}/${name}`));
    if (!got) continue;
    check(`${dir}/${name}`, got.stat);
    const parsed = parseJson(got.data);
    const counted = parsed.ok && isAttempts(parsed.value) ? parsed.value.attempts : undefined;
    if (counted !== undefined) attempts = Math.max(attempts ?? counted, counted);
  }

  const record = layout.recordPath(AREA.completed, key);
  const completed = await coordinator.exists(record);
  if (completed) check(record, completed);

  return {
    guard,
    hasTree: (k) => k === encoded && tree !== null,
    completed: (k) => k === encoded && completed !== null,
    attempts: (k) => (k === encoded ? attempts : undefined),
  };
}

const isAttempts = (value: unknown): value is { attempts: number } =>
  typeof value === 'object' &&
  value !== null &&
  Number.isInteger((value as { attempts?: unknown }).attempts);

/** Facts of no task: for nodes that belong to none (settings, registrations, candidates). */
const NO_FACTS: FreshFacts = {
  guard: [],
  hasTree: () => false,
  completed: () => false,
  attempts: () => undefined,
};

/**
 * How to make a finding about `path` again: read the node, then (for a node of task `key`) the
 * task's facts, and judge them with the same check the diagnosis used. The finding holds when
 * the check gives a finding of the same kind that repair moves.
 */
export function recheckBy(
  ctx: EngineContext,
  path: string,
  kind: Verdict['kind'],
  key: string | null,
  judge: (got: Got, facts: TaskFacts) => Verdict | null | Promise<Verdict | null>,
): Recheck {
  return async () => {
    const got = await missingIsNull(ctx.coordinator.get(path));
    if (!got) return { left: 'gone' };
    const facts = key === null ? NO_FACTS : await readTaskFacts(ctx, key);
    const verdict = await judge(got, facts);
    if (verdict?.kind !== kind || verdict.repair !== 'quarantine')
      return { left: 'no longer damaged' };
    return { got, guard: facts.guard };
  };
}
