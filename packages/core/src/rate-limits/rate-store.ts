import { ZoottError } from '../contract/errors.js';
import { decodeJson, encodeJson } from '../contract/paths.js';
import { codeOf } from '../engine/errors.js';
import { areaParent } from '../engine/layout.js';
import { ensureWorldPath } from '../engine/world-nodes.js';
import type { Engine } from '../front/engine.js';
import { AREA_NAMES } from '../tree/areas.js';
import { show } from '../tree/show.js';
import { formatRate, parseRate, type Rate } from './rate-spec.js';

/** Where rate limits live: `/zoott_limits/<world>/<encoded type>`. */
export const LIMITS_ROOT = areaParent(AREA_NAMES.limits);

/** The folder of a world's rate limits. */
export function limitsPath(world: string): string {
  return `${LIMITS_ROOT}/${world}`;
}

/** One stored limit: the task type and its rate. */
export interface RateLimit extends Rate {
  type: string;
  /** The rate as given, e.g. `20/s`. */
  rate: string;
}

/** A type as a node name: any type (slashes included) maps to one node and back. */
export function limitNodeName(type: string): string {
  const encoded = encodeURIComponent(type);
  return encoded === '.' || encoded === '..' ? encoded.replace(/\./g, '%2E') : encoded;
}

function checkType(type: unknown): string {
  if (typeof type !== 'string' || type.length === 0 || type.length > 200)
    throw new ZoottError(
      'INVALID_CONFIG',
      `type ${show(type)}: must be a task type of 1 to 200 characters`,
      { field: 'type' },
    );
  return type;
}

/**
 * Sets (or replaces) the limit of `type` in the engine's world: `rate` as `20/s`, `100/m`,
 * `3000/h`. Checked before anything is written; the world must be initialised.
 */
export async function setRateLimit(engine: Engine, type: string, rate: string): Promise<RateLimit> {
  checkType(type);
  const parsed = parseRate(rate);
  const ctx = await engine.context();
  const coordinator = ctx.coordinator;
  const dir = limitsPath(ctx.layout.world);
  // `init` made it; a world made by zoott 0.1.0 gets it here, as `init` would make it.
  await ensureWorldPath(coordinator, dir, (await coordinator.getAcl(ctx.layout.root)).acl);
  const limit: RateLimit = { type, rate: formatRate(parsed), ...parsed };
  const path = `${dir}/${limitNodeName(type)}`;
  try {
    await coordinator.create(path, encodeJson(limit));
  } catch (err) {
    if (codeOf(err) !== 'NODE_EXISTS') throw err;
    await coordinator.set(path, encodeJson(limit));
  }
  return limit;
}

/** Removes the limit of `type`; `false` when it had none. */
export async function removeRateLimit(engine: Engine, type: string): Promise<boolean> {
  checkType(type);
  const ctx = await engine.context();
  try {
    await ctx.coordinator.delete(`${limitsPath(ctx.layout.world)}/${limitNodeName(type)}`);
    return true;
  } catch (err) {
    if (codeOf(err) === 'NO_NODE') return false;
    throw err;
  }
}

/** Reads one limit node; `null` when it is gone or not a limit (written by hand). */
export async function readRateLimit(
  engine: { coordinator: Engine['coordinator'] },
  path: string,
  watch?: () => void,
): Promise<RateLimit | null> {
  try {
    const got = await engine.coordinator.get(path, watch ? { watch } : {});
    const stored = decodeJson<Partial<RateLimit> | null>(got.data, path);
    if (typeof stored !== 'object' || stored === null) return null;
    if (typeof stored.type !== 'string' || typeof stored.rate !== 'string') return null;
    return { type: stored.type, rate: stored.rate, ...parseRate(stored.rate) };
  } catch (err) {
    if (codeOf(err) === 'NO_NODE') return null;
    // Not a limit zoott wrote (not JSON, or a rate it cannot read): no limit.
    if (codeOf(err) === 'INVALID_CONFIG' || codeOf(err) === 'BAD_ARGUMENTS') return null;
    throw err;
  }
}

/** The world's limits, by type. */
export async function listRateLimits(engine: Engine): Promise<RateLimit[]> {
  const ctx = await engine.context();
  const dir = limitsPath(ctx.layout.world);
  let names: string[];
  try {
    names = await ctx.coordinator.children(dir);
  } catch (err) {
    if (codeOf(err) === 'NO_NODE') return [];
    throw err;
  }
  const limits = await Promise.all(names.map((n) => readRateLimit(ctx, `${dir}/${n}`)));
  return limits
    .filter((l): l is RateLimit => l !== null)
    .sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
}
