import { decodeJson } from '../contract/paths.js';
import type { EngineContext } from './context.js';
import { sessionBack } from './session.js';
import type { ClaimIdentity, EntryData } from './types.js';

/** The parts of a claim attempt that show whether its multi applied. */
export interface ClaimWritten {
  entryPath: string;
  workingPath: string;
  identity: ClaimIdentity;
}

/**
 * After a claim multi's reply was lost: whether it applied, by the working node being this
 * session's own and the entry carrying this very claim (session, time and worker). Returns
 * the entry's version then (the claim is adopted), else `null`. Without this, a claim that
 * applied but whose reply was lost would hold the task for as long as the session lives, run
 * by no one.
 */
export async function adoptLostClaim(
  ctx: EngineContext,
  worker: string,
  a: ClaimWritten,
): Promise<number | null> {
  const { coordinator: c } = ctx;
  const { entryPath, workingPath } = a;
  const { session, at } = a.identity;
  try {
    if (!(await sessionBack(c, session))) return null;
    const stat = await c.exists(workingPath);
    if (stat?.ephemeralOwner !== session) return null;
    const entry = await c.get(entryPath);
    const claim = decodeJson<EntryData>(entry.data, entryPath).claim;
    if (claim?.session !== session || claim.at !== at || claim.worker !== worker) return null;
    ctx.logger.warn({ path: entryPath }, 'claim reply lost; the claim had applied: adopted');
    return entry.stat.version;
  } catch {
    return null;
  }
}
