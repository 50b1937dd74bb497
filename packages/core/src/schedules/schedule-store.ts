import { ZoottError } from '../contract/errors.js';
import { decodeJson, encodeJson } from '../contract/paths.js';
import { codeOf } from '../engine/errors.js';
import { areaParent } from '../engine/layout.js';
import { ensureWorldPath, schedulerElectionPath } from '../engine/world-nodes.js';
import type { Engine } from '../front/engine.js';
import { electionContenders } from '../recipes/election/leader-election.js';
import { AREA_NAMES } from '../tree/areas.js';
import { validateTaskName } from '../tree/names.js';
import {
  nextTick,
  type ScheduleSpec,
  type StoredSchedule,
  validateSchedule,
} from './schedule-spec.js';

/** Where a world's schedules live: `/zoott_schedules/<world>/<name>`. */
export const SCHEDULES_ROOT = areaParent(AREA_NAMES.schedules);
/** Where a world's elections live: `/zoott_leaders/<world>/<role>`. */
export const LEADERS_ROOT = areaParent(AREA_NAMES.leaders);

/** The folder of a world's schedules. */
export function schedulesPath(world: string): string {
  return `${SCHEDULES_ROOT}/${world}`;
}

export { schedulerElectionPath };

/** A schedule as listed: what is stored, plus the next tick after now (`null`: never again). */
export interface ListedSchedule extends StoredSchedule {
  nextTick: number | null;
}

/**
 * Stores a new schedule for the engine's world. The spec is validated first (bad cron,
 * unknown time zone: INVALID_CONFIG, nothing written); the world must be initialised; a
 * schedule of that name must not exist (INVALID_CONFIG: remove it first).
 */
export async function addSchedule(engine: Engine, input: ScheduleSpec): Promise<StoredSchedule> {
  const spec = validateSchedule(input);
  const ctx = await engine.context();
  const coordinator = ctx.coordinator;
  const dir = schedulesPath(ctx.layout.world);
  // `init` made it; a world made by zoott 0.1.0 gets it here, as `init` would make it.
  await ensureWorldPath(coordinator, dir, (await coordinator.getAcl(ctx.layout.root)).acl);
  const stored: StoredSchedule = { ...spec, createdAt: ctx.clock.now() };
  const path = `${dir}/${spec.name}`;
  const data = encodeJson(stored);
  if (data.byteLength > ctx.maxRecordBytes)
    throw new ZoottError(
      'INVALID_CONFIG',
      `data: the schedule is ${data.byteLength} bytes, more than ${ctx.maxRecordBytes}`,
      { field: 'data' },
    );
  try {
    await coordinator.create(path, data);
  } catch (err) {
    if (codeOf(err) === 'NODE_EXISTS')
      throw new ZoottError(
        'INVALID_CONFIG',
        `schedule ${spec.name} already exists in world ${ctx.layout.world}; remove it first`,
        { field: 'name', path },
      );
    throw err;
  }
  return stored;
}

/** The world's schedules by name, each with its next tick after the engine clock's now. */
export async function listSchedules(engine: Engine): Promise<ListedSchedule[]> {
  const ctx = await engine.context();
  const coordinator = ctx.coordinator;
  const dir = schedulesPath(ctx.layout.world);
  let names: string[];
  try {
    names = (await coordinator.children(dir)).sort();
  } catch (err) {
    if (codeOf(err) === 'NO_NODE') return [];
    throw err;
  }
  const now = ctx.clock.now();
  const out = await Promise.all(
    names.map(async (name): Promise<ListedSchedule | null> => {
      const path = `${dir}/${name}`;
      let data: Uint8Array;
      try {
        data = (await coordinator.get(path)).data;
      } catch (err) {
        if (codeOf(err) === 'NO_NODE') return null;
        throw err;
      }
      const stored = readStoredSchedule(data);
      if (typeof stored === 'string') {
        // Written by hand or by something else: reported and left out, never a failed list.
        ctx.onCorrupt({ path, reason: stored });
        return null;
      }
      let next: number | null = null;
      try {
        next = nextTick(stored, Math.max(now, stored.lastTick ?? 0));
      } catch {
        // An expression this croner cannot read: listed, never ticks.
      }
      return { ...stored, nextTick: next };
    }),
  );
  return out.filter((s): s is ListedSchedule => s !== null);
}

/** A schedule node's data, or what is wrong with it. */
export function readStoredSchedule(data: Uint8Array): StoredSchedule | string {
  let value: unknown;
  try {
    value = decodeJson(data);
  } catch {
    return 'data is not JSON: not a schedule';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'not a schedule object';
  const stored = value as Partial<StoredSchedule>;
  if (
    typeof stored.name !== 'string' ||
    typeof stored.cron !== 'string' ||
    typeof stored.type !== 'string'
  )
    return 'has no name, cron and type: not a schedule';
  if (typeof stored.createdAt !== 'number') return 'has no numeric createdAt: not a schedule';
  return stored as StoredSchedule;
}

/** Removes a schedule; `false` when there was none of that name. Queued ticks stay. */
export async function removeSchedule(engine: Engine, name: string): Promise<boolean> {
  validateTaskName(name, 'name');
  const ctx = await engine.context();
  try {
    await ctx.coordinator.delete(`${schedulesPath(ctx.layout.world)}/${name}`);
    return true;
  } catch (err) {
    if (codeOf(err) === 'NO_NODE') return false;
    throw err;
  }
}

/** The identifier (worker id) of the world's elected scheduler, `null` when none stands. */
export async function currentScheduler(engine: Engine): Promise<string | null> {
  const ctx = await engine.context();
  const ids = await electionContenders(ctx.coordinator, schedulerElectionPath(ctx.layout.world));
  return ids[0] ?? null;
}
