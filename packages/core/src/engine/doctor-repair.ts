import type { Coordinator } from '../contract/coordinator.js';
import { encodeJson, utf8 } from '../contract/paths.js';
import { systemEngineClock } from './clock.js';
import { type Finding, type FindingKind, recheckOf } from './doctor-findings.js';
import { codeOf } from './errors.js';
import { ensureNode } from './session.js';
import type { EngineClock } from './types.js';

/** Root of the quarantine area: `/zoott_q/<world>/item-<seq>`. */
export const QUARANTINE_ROOT = '/zoott_q';

/** A node moved to the quarantine area. */
export interface Quarantined {
  from: string;
  to: string;
}

/** A `quarantine` finding that `repairWorld` left where it is, and why. */
export interface NotMoved {
  path: string;
  kind: FindingKind;
  /**
   * `gone`: the node no longer exists. `no longer damaged`: read again, it (or its task) no
   * longer shows what the finding said, e.g. its task was queued meanwhile. `changed while
   * moving`: the node or its task changed between that second look and the move, so the
   * move did not apply; doctor run again says what it is now. `not rechecked`: the finding
   * did not come from `diagnoseWorld`, so nothing says how to make it again.
   */
  why: 'gone' | 'no longer damaged' | 'changed while moving' | 'not rechecked';
}

export interface RepairOutcome {
  moved: Quarantined[];
  notMoved: NotMoved[];
}

export interface RepairOptions {
  /** Stamps `movedAt`; the engine's clock when there is one. */
  clock?: Pick<EngineClock, 'now'>;
  /** After each `quarantine` finding: how many of `total` are dealt with. */
  onProgress?: (done: number, total: number) => void;
}

/** A multi that failed on a guard: something changed since the recheck read it. */
const CHANGED = new Set(['BAD_VERSION', 'NO_NODE', 'NODE_EXISTS', 'NOT_EMPTY']);

/**
 * Moves every `quarantine` finding of `diagnoseWorld` to `/zoott_q/<world>/item-<seq>`,
 * each only if the finding still holds at the moment of the move: it is made again from
 * fresh reads (the node, and for a task's node the task's tree node, entries and completed
 * record), then ONE multi creates the quarantine node (its data: the original path, the
 * finding and the bytes as text), checks everything that second look rests on (versions, and
 * that a missing tree node is still missing) and deletes the original at the version read.
 * A finding that no longer holds, or whose node or task changed before the multi, is left
 * alone (`notMoved`), so a repair on a busy world never moves a live node. Nothing is
 * deleted outright.
 */
export async function repairWorld(
  c: Coordinator,
  world: string,
  findings: readonly Finding[],
  options: RepairOptions = {},
): Promise<RepairOutcome> {
  const clock = options.clock ?? systemEngineClock;
  const dir = `${QUARANTINE_ROOT}/${world}`;
  await ensureNode(c, QUARANTINE_ROOT);
  await ensureNode(c, dir);
  const movable = findings.filter((f) => f.repair === 'quarantine');
  const out: RepairOutcome = { moved: [], notMoved: [] };
  for (const [i, f] of movable.entries()) {
    const recheck = recheckOf(f);
    const again = recheck ? await recheck() : { left: 'not rechecked' as const };
    if ('left' in again) out.notMoved.push({ path: f.path, kind: f.kind, why: again.left });
    else {
      const record = {
        from: f.path,
        kind: f.kind,
        detail: f.detail,
        movedAt: clock.now(),
        ephemeralOwner: again.got.stat.ephemeralOwner,
        data: utf8.decode(again.got.data),
      };
      try {
        const results = await c.multi([
          { op: 'create', path: `${dir}/item-`, data: encodeJson(record), sequential: true },
          // Before the delete: the guard may check the node itself (an entry of its task).
          ...again.guard,
          { op: 'delete', path: f.path, version: again.got.stat.version },
        ]);
        const created = results[0];
        out.moved.push({ from: f.path, to: created?.op === 'create' ? created.path : dir });
      } catch (err) {
        if (!CHANGED.has(codeOf(err) ?? '')) throw err;
        out.notMoved.push({ path: f.path, kind: f.kind, why: 'changed while moving' });
      }
    }
    options.onProgress?.(i + 1, movable.length);
  }
  return out;
}
