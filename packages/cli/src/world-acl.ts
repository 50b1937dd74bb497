import { type Acl, type Coordinator, digestAcl } from '@zoott/core';
import { describeAcl, worldRoot } from '@zoott/core/internal';
import { raceWorld } from '@zoott/jobs';
import type { Settings } from './connection.js';

/**
 * The ACL a world made with these settings' credentials carries: what ZooKeeper's `auth`
 * scheme (the CLI's default ACL with `--auth`) expands to, all permissions for that digest
 * user. `null` without credentials: the world is then open by request.
 */
export function requestedAcl(settings: Settings): Acl[] | null {
  if (settings.auth.length === 0) return null;
  // ZooKeeper's `auth` scheme grants every identity the session added.
  return settings.auth.map((cred) => {
    const colon = cred.indexOf(':');
    return digestAcl(cred.slice(0, colon), cred.slice(colon + 1), 'cdrwa');
  });
}

/** `digest:alice:… cdrwa` without the hash, for messages (the hash is noise to people). */
export function showAcl(acl: readonly Acl[]): string {
  return describeAcl(
    acl.map((e) => (e.scheme === 'digest' ? { ...e, id: e.id.replace(/:.*/, ':…') } : e)),
  );
}

/** What besides its own nodes belongs to a world, found by reading it. */
export interface WorldExtent {
  /** The world's race coordinators' world, when it exists. */
  raceWorld: string | null;
}

/**
 * What belongs to a world beside its own nodes: its race world. (Its reply paths and race
 * state live under its own nodes of the reply and race areas, which `lock-down` and
 * `doctor` read with the rest of the world.)
 */
export async function worldExtent(c: Coordinator, world: string): Promise<WorldExtent> {
  const races = raceWorld(world);
  return { raceWorld: (await c.exists(worldRoot(races))) !== null ? races : null };
}
