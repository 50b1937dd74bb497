import { AREA, type Area, parseEntryName } from '../engine/layout.js';
import { type Got, isObject, parseJson, type TaskFacts, type Verdict } from './doctor-findings.js';

/*
 * The checks of one node of the pending, working, completed or failed area, as pure
 * functions of what was read: the diagnosis and the recheck before a repair judge alike.
 */

/** What one node of each area holds, in findings. */
const AREA_NODE: Record<Area, string> = {
  [AREA.pending]: 'pending entry',
  [AREA.working]: 'claim',
  [AREA.completed]: 'completed record',
  [AREA.failed]: 'failed record',
};

/**
 * One area node by itself: a finding (its name, whether it is ephemeral where it must be,
 * its data), or the task it holds and, for an entry, that task's attempts so far.
 */
export function areaNode(
  area: Area,
  name: string,
  got: Got,
): Verdict | { key: string; attempts: number | undefined } {
  const key = area === AREA.pending ? parseEntryName(name)?.encodedKey : name;
  if (key === undefined)
    return {
      kind: 'corrupt',
      detail: 'pending area: not an entry name; the engine skips it',
      repair: 'quarantine',
    };
  if (area === AREA.working && got.stat.ephemeralOwner === null)
    return {
      kind: 'not-ephemeral',
      detail:
        'a claim that no session owns (claims are ephemeral); the engine ignores it and replaces it on the next claim',
      repair: 'quarantine',
    };
  const parsed = parseJson(got.data);
  const what = AREA_NODE[area];
  if (!parsed.ok || !isObject(parsed.value))
    return {
      kind: 'corrupt',
      detail: `${what}: ${parsed.ok ? 'not a JSON object' : parsed.why}`,
      repair: area === AREA.working ? 'none' : 'quarantine',
    };
  if (area !== AREA.pending) return { key, attempts: undefined };
  const entry = parsed.value;
  if (
    typeof entry.name !== 'string' ||
    typeof entry.type !== 'string' ||
    !Number.isInteger(entry.attempts) ||
    !Number.isInteger(entry.maxAttempts)
  )
    return {
      kind: 'corrupt',
      detail: 'pending entry: wrong shape (name, type, attempts, maxAttempts)',
      repair: 'quarantine',
    };
  return { key, attempts: entry.attempts as number };
}

/** The finding of an area node whose task has no tree node. */
export const orphanOf = (area: Area, key: string): Verdict => ({
  kind: 'orphan',
  detail: `${AREA_NODE[area]} of task ${key}, which has no tree node`,
  repair: 'quarantine',
});

/** An area node judged whole: by itself, then against its task's tree node. */
export const judgeArea =
  (area: Area, name: string) =>
  (got: Got, facts: TaskFacts): Verdict | null => {
    const node = areaNode(area, name, got);
    if ('kind' in node) return node;
    return facts.hasTree(node.key) ? null : orphanOf(area, node.key);
  };
