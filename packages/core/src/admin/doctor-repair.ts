import type { Coordinator } from '../contract/coordinator.js';
import { isZoottError } from '../contract/errors.js';
import { systemEngineClock } from '../engine/clock.js';
import { codeOf } from '../engine/errors.js';
import { areaParent } from '../engine/layout.js';
import type { EngineClock } from '../engine/types.js';
import { ensureWorldPath } from '../engine/world-nodes.js';
import { AREA_NAMES } from '../tree/areas.js';
import { type Finding, type FindingKind, recheckOf } from './doctor-findings.js';
import { moveToQuarantine } from './quarantine.js';

/** Root of the quarantine area: `/zoott_q/<world>/item-<seq>`. */
export const QUARANTINE_ROOT = areaParent(AREA_NAMES.quarantine);

/** A node moved to the quarantine area. */
export interface Quarantined {
  from: string;
  to: string;
}

/** A `quarantine` finding that `repairWorld` left where it is, and why. */
export interface NotMoved {
  path: string;
  kind: FindingKind;
  /** For `failed`: the error the move met. */
  error?: string;
  /**
   * `gone`: the node no longer exists. `no longer damaged`: read again, it (or its task) no
   * longer shows what the finding said, e.g. its task was queued meanwhile. `changed while
   * moving`: the node or its task changed between that second look and the move, so the
   * move did not apply; doctor run again says what it is now. `not rechecked`: the finding
   * did not come from `diagnoseWorld`, so nothing says how to make it again. `failed`: the
   * move met an error (`error`; the node is left as it was) and the others went on.
   */
  why: 'gone' | 'no longer damaged' | 'changed while moving' | 'not rechecked' | 'failed';
}

/** What `repairWorld` did: the nodes it moved into the quarantine, and those it left, with why. */
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
 * finding and the bytes, exactly: see `moveToQuarantine`), checks everything that second look
 * rests on (versions, and that a missing tree node is still missing) and deletes the
 * original at the version read. A finding that no longer holds, or whose node or task
 * changed before the multi, is left alone (`notMoved`), so a repair on a busy world never
 * moves a live node. A node whose move fails otherwise is left as it was (`failed`, with the
 * error) and the repair goes on with the next. Nothing is deleted outright.
 */
export async function repairWorld(
  coordinator: Coordinator,
  world: string,
  findings: readonly Finding[],
  options: RepairOptions = {},
): Promise<RepairOutcome> {
  const clock = options.clock ?? systemEngineClock;
  const dir = `${QUARANTINE_ROOT}/${world}`;
  const movable = findings.filter((f) => f.repair === 'quarantine');
  const out: RepairOutcome = { moved: [], notMoved: [] };
  if (movable.length > 0) await ensureWorldPath(coordinator, dir);
  for (const [index, finding] of movable.entries()) {
    try {
      const recheck = recheckOf(finding);
      const again = recheck ? await recheck() : { left: 'not rechecked' as const };
      if ('left' in again)
        out.notMoved.push({ path: finding.path, kind: finding.kind, why: again.left });
      else {
        const meta = { kind: finding.kind, detail: finding.detail, movedAt: clock.now() };
        const to = await moveToQuarantine(
          coordinator,
          dir,
          finding.path,
          again.got,
          meta,
          again.guard,
        );
        out.moved.push({ from: finding.path, to });
      }
    } catch (err) {
      const code = codeOf(err);
      if (CHANGED.has(code ?? ''))
        out.notMoved.push({ path: finding.path, kind: finding.kind, why: 'changed while moving' });
      // The connection or session is gone (and the move's outcome may be unknown): nothing
      // further can be moved, or even looked at.
      else if (
        isZoottError(err) &&
        (err.retryable || code === 'SESSION_EXPIRED' || code === 'CLOSED')
      )
        throw err;
      else
        out.notMoved.push({
          path: finding.path,
          kind: finding.kind,
          why: 'failed',
          error: err instanceof Error ? err.message : String(err),
        });
    }
    options.onProgress?.(index + 1, movable.length);
  }
  return out;
}
