import { type Acl, type Coordinator, digestAcl, isZoottError, Perms } from '@zoott/core';
import { describeAcl, worldRoot } from '@zoott/core/internal';
import { raceWorld } from '@zoott/jobs';
import type { Settings } from './connection.js';

/**
 * The ACL a world made with these settings carries: the `--acl` entries, else what
 * ZooKeeper's `auth` scheme (the CLI's default ACL with `--auth`, a SASL login or a client
 * certificate) expands to:
 * all permissions for each digest user, and for what the server made of the SASL login and
 * the client certificate (the session, opened only then, asks it). `null` without either:
 * the world is then open by request.
 */
export async function requestedAcl(
  settings: Settings,
  session?: () => Promise<Coordinator>,
): Promise<Acl[] | null> {
  // `--acl` names it outright (x509 subjects, SASL users, digest users).
  if (settings.acl === 'open') return null;
  if (settings.acl !== null) return settings.acl;
  const login = settings.zkSecurity.options.sasl;
  const certificate = settings.zkSecurity.options.tls?.cert !== undefined;
  if (settings.auth.length === 0 && !login && !certificate) return null;
  // ZooKeeper's `auth` scheme grants every identity the session added: its digest users,
  // and whatever the server made of its SASL login and client certificate.
  return [
    ...settings.auth.map((cred) => {
      const colon = cred.indexOf(':');
      return digestAcl(cred.slice(0, colon), cred.slice(colon + 1), 'cdrwa');
    }),
    ...(await transportIdentities(await session?.(), login?.username)),
  ];
}

/**
 * The session's ids besides digest ones, as the server holds them (whoAmI, ZooKeeper 3.7+):
 * a client certificate's `x509` subject, a SASL login's `sasl` user. Before 3.7, or on a
 * coordinator that cannot say, the SASL login is taken as it was given.
 */
async function transportIdentities(
  c: Coordinator | undefined,
  sasl: string | undefined,
): Promise<Acl[]> {
  const fallback = sasl !== undefined ? [{ scheme: 'sasl', id: sasl, perms: Perms.ALL }] : [];
  const who = (c as { whoAmI?: () => Promise<Array<{ scheme: string; id: string }>> } | undefined)
    ?.whoAmI;
  if (typeof who !== 'function') return fallback;
  try {
    const ids = await who.call(c);
    // ip is no credential (the auth scheme skips it); digest ids carry their hash above.
    return ids
      .filter((i) => i.scheme !== 'ip' && i.scheme !== 'digest')
      .map((i) => ({ scheme: i.scheme, id: i.id, perms: Perms.ALL }));
  } catch (err) {
    if (isZoottError(err, 'UNIMPLEMENTED')) return fallback;
    throw err;
  }
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
