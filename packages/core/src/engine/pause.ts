import type { Coordinator } from '../contract/coordinator.js';
import { isZoottError, ZoottError } from '../contract/errors.js';
import { decodeJson, encodeJson } from '../contract/paths.js';
import { validateTaskType } from '../tree/names.js';
import { codeOf } from './errors.js';

/**
 * What is paused in a world: all of it, and/or some task types. Workers claim nothing that
 * is paused; tasks already running finish. Stored in the world meta (the tree root's data,
 * field `paused`), so it carries the world's ACL and every worker already knows where it is.
 */
export interface PauseState {
  /** The whole world is paused. */
  world: boolean;
  /** Task types paused on their own (sorted). */
  types: string[];
}

/** A change asked of {@link setPause}: pause or resume the world, or one type. */
export interface PauseChange {
  paused: boolean;
  /** One task type; absent: the whole world (resuming the world also resumes every type). */
  type?: string;
}

const NOT_PAUSED: PauseState = Object.freeze({ world: false, types: [] }) as PauseState;

/** The pause state held in a world meta object (anything unreadable counts as not paused). */
export function pauseOf(meta: unknown): PauseState {
  if (typeof meta !== 'object' || meta === null) return NOT_PAUSED;
  const paused = (meta as { paused?: unknown }).paused;
  if (typeof paused !== 'object' || paused === null) return NOT_PAUSED;
  const { world, types } = paused as { world?: unknown; types?: unknown };
  return {
    world: world === true,
    types: Array.isArray(types) ? types.filter((t): t is string => typeof t === 'string') : [],
  };
}

/**
 * What `pauseOf` leaves out of a world meta's `paused` field, in words (`null`: nothing, or
 * no field): the shape {@link setPause} writes is `{world: boolean, types: string[]}`.
 * Anything else reads as "not paused" (or fewer paused types), so an operator's pause that
 * was written wrongly does not hold.
 */
export function pauseProblem(meta: unknown): string | null {
  if (typeof meta !== 'object' || meta === null || !('paused' in meta)) return null;
  const paused = (meta as { paused: unknown }).paused;
  if (typeof paused !== 'object' || paused === null || Array.isArray(paused))
    return 'paused: not an object {world, types}';
  const { world, types } = paused as { world?: unknown; types?: unknown };
  if (world !== undefined && typeof world !== 'boolean') return 'paused.world: not true or false';
  if (types !== undefined && !Array.isArray(types)) return 'paused.types: not a list of types';
  const stray = Array.isArray(types) ? types.filter((t) => typeof t !== 'string') : [];
  if (stray.length > 0) return `paused.types: ${stray.length} entries that are not type names`;
  return null;
}

/** Whether a task type may be claimed under `state`. */
export function typePaused(state: PauseState, type: string): boolean {
  return state.world || state.types.includes(type);
}

/** Reads the pause state from the world meta at `root`. */
export async function readPause(coordinator: Coordinator, root: string): Promise<PauseState> {
  const got = await coordinator.get(root);
  return pauseOf(decodeJson<unknown>(got.data, root));
}

/**
 * Pauses or resumes, as a compare-and-set of the world meta (two operators pausing two types
 * at once both win). Returns the state after the change.
 */
export async function setPause(
  coordinator: Coordinator,
  root: string,
  change: PauseChange,
): Promise<PauseState> {
  if (change.type !== undefined) validateTaskType(change.type);
  for (let round = 0; round < 16; round++) {
    const got = await coordinator.get(root);
    const meta = decodeJson<Record<string, unknown>>(got.data, root);
    const now = pauseOf(meta);
    const next: PauseState =
      change.type === undefined
        ? { world: change.paused, types: change.paused ? now.types : [] }
        : {
            world: now.world,
            types: [
              ...new Set(
                change.paused
                  ? [...now.types, change.type]
                  : now.types.filter((t) => t !== change.type),
              ),
            ].sort(),
          };
    const { paused: _old, ...rest } = meta;
    const stored =
      next.world || next.types.length > 0 ? { ...rest, paused: next } : (rest as object);
    try {
      await coordinator.set(root, encodeJson(stored), got.stat.version);
      return next;
    } catch (err) {
      if (codeOf(err) !== 'BAD_VERSION') throw err;
    }
  }
  throw new ZoottError('TASK_STATE', `${root}: too much contention to change the pause state`, {
    op: 'pause',
    path: root,
  });
}

/**
 * Keeps a worker's view of the pause state current with a data watch on the world meta
 * (re-armed on every change and on every new session), so a pause stops claims as soon
 * as the change reaches the worker, without polling.
 */
export class PauseWatch {
  state: PauseState = NOT_PAUSED;
  private closed = false;
  /** A data watch is set and has not fired (one at most, so reconnects do not pile them up). */
  private watching = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly root: string,
    private readonly onChange: () => void,
  ) {
    this.unsubscribe = coordinator.onSession((event) => {
      // A lost session takes its watches along; a new one reads (and watches) again.
      if (event.type === 'lost') this.watching = false;
      if (event.type === 'connected' || event.type === 'reconnected') void this.read();
    });
  }

  /** Reads the state (setting the watch if none is set); resolves once the read is done. */
  async read(): Promise<void> {
    if (this.closed) return;
    const arm = !this.watching;
    this.watching = true;
    try {
      const got = await this.coordinator.get(
        this.root,
        arm
          ? {
              watch: () => {
                this.watching = false;
                void this.read();
              },
            }
          : {},
      );
      const next = pauseOf(decodeJson<unknown>(got.data, this.root));
      const changed =
        next.world !== this.state.world || next.types.join('\0') !== this.state.types.join('\0');
      this.state = next;
      if (changed) this.onChange();
    } catch (err) {
      if (arm) this.watching = false;
      // Connection trouble: the next session event reads again.
      if (!isZoottError(err)) throw err;
    }
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
  }
}
