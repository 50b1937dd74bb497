import { type Acl, type Coordinator, isZoottError } from '@zoott/core';
import { decodeJson, ensureWorldPath, type Finding } from '@zoott/core/internal';
import {
  DEFAULT_EXCHANGE,
  LEGACY_RACES_ROOT,
  LEGACY_REPLY_ROOT,
  racesRoot,
  raceWorld,
} from './constants.js';
import {
  aclText,
  ensureReplyDir,
  type ReplyAddress,
  replyDir,
  replyOp,
  worldAcl,
} from './reply.js';

/*
 * zoott 0.1.0 published every world's results under one shared node,
 * `/zoott_r/<exchange>/<routingkey>`, each directory naming the world that made it, and kept
 * race state at `/zoott_r/races/<race>`. This release publishes in each world's own reply
 * area. A world's results still waiting there are moved over: by `zoott init`, by each worker
 * when it starts, and by `zoott doctor --repair`, oldest first, each in one multi (the copy
 * in the world's reply area, the delete of the old node at the version read), so a result is
 * moved once and a consumer of the old node and the move cannot both have it.
 */

const missingIsEmpty = (err: unknown) =>
  isZoottError(err, 'NO_NODE') || isZoottError(err, 'NO_AUTH') ? [] : Promise.reject(err);

/** The server's sequence number at the end of a `result-…NNNNNNNNNN` name. */
const sequenceOf = (name: string) => Number(/(\d{10})$/.exec(name)?.[1] ?? Number.NaN);

/**
 * The AMQP bridge's outbox exchange: its directory for a world is named after the world
 * (`zoott~amqp/<world>`) and names no owner in its data; its bridges' claims sit beside it
 * (`<world>~claims/<result>`, ephemeral).
 */
const BRIDGE_OUTBOX = 'zoott~amqp';

/** A reply directory of zoott 0.1.0 that names `world`: its exchange, routing key and path. */
export interface LegacyReplyDir {
  exchange: string;
  routingkey: string;
  path: string;
  /** For the AMQP bridge's outbox: where its bridges claim the results they publish. */
  claims?: string;
}

/**
 * The address of an old directory: its `_default` exchange node is the default exchange's
 * (a job may not name `_default` itself, as it would share that path).
 */
const addressOf = (dir: LegacyReplyDir): ReplyAddress => ({
  exchange: dir.exchange === DEFAULT_EXCHANGE ? '' : dir.exchange,
  routingkey: dir.routingkey,
});

/** The reply directories zoott 0.1.0 made for `world` (their data names it), and its bridge outbox. */
export async function legacyReplyDirs(
  coordinator: Coordinator,
  world: string,
): Promise<LegacyReplyDir[]> {
  const out: LegacyReplyDir[] = [];
  for (const exchange of (
    await coordinator.children(LEGACY_REPLY_ROOT).catch(missingIsEmpty)
  ).sort()) {
    const at = `${LEGACY_REPLY_ROOT}/${exchange}`;
    if (at === LEGACY_RACES_ROOT) continue;
    for (const routingkey of (await coordinator.children(at).catch(missingIsEmpty)).sort()) {
      const path = `${at}/${routingkey}`;
      let owner: unknown = null;
      try {
        owner = decodeJson<{ world?: unknown } | null>(
          (await coordinator.get(path)).data,
          path,
        )?.world;
      } catch {
        // Gone, unreadable, empty or not JSON: no world's.
      }
      if (owner === world) out.push({ exchange, routingkey, path });
      else if (exchange === BRIDGE_OUTBOX && routingkey === world)
        out.push({ exchange, routingkey, path, claims: `${path}~claims` });
    }
  }
  return out;
}

/** The race state zoott 0.1.0 kept for `world`'s races (their meta names it, or its race world). */
export async function legacyRaceState(coordinator: Coordinator, world: string): Promise<string[]> {
  const out: string[] = [];
  for (const race of (await coordinator.children(LEGACY_RACES_ROOT).catch(missingIsEmpty)).sort()) {
    const path = `${LEGACY_RACES_ROOT}/${race}`;
    try {
      const meta = decodeJson<{ world?: unknown } | null>((await coordinator.get(path)).data, path);
      if (meta?.world === world || meta?.world === raceWorld(world)) out.push(path);
    } catch {
      // Gone or unreadable: not this world's to report.
    }
  }
  return out;
}

/** What {@link moveLegacyReplies} did. */
export interface LegacyMove {
  /** Results moved, oldest first in each directory. */
  moved: { from: string; to: string }[];
  /** Old directories emptied and removed. */
  removed: string[];
  /** What stayed, and why (a result not under the world's ACL is never trusted, so never moved). */
  left: { path: string; why: string }[];
}

/**
 * Moves `world`'s results from zoott 0.1.0's shared reply directories into its own reply
 * area (see the top of this file), and removes the directories it emptied. Safe beside
 * consumers and other movers: a result taken meanwhile is simply not moved.
 */
export async function moveLegacyReplies(
  coordinator: Coordinator,
  world: string,
): Promise<LegacyMove> {
  const report: LegacyMove = { moved: [], removed: [], left: [] };
  const dirs = await legacyReplyDirs(coordinator, world);
  if (dirs.length === 0) return report;
  const acl = await worldAcl(coordinator, world);
  for (const dir of dirs) {
    const names = (await coordinator.children(dir.path).catch(missingIsEmpty)).sort(
      (a, b) => sequenceOf(a) - sequenceOf(b),
    );
    if (names.length > 0) {
      // The bridge's outbox names no owner: no reaper removes what waits to be published.
      const to = dir.claims
        ? await ensureWorldPath(coordinator, replyDir(addressOf(dir), world), acl).then(() =>
            replyDir(addressOf(dir), world),
          )
        : await ensureReplyDir(coordinator, addressOf(dir), world, acl);
      for (const name of names)
        if (dir.claims && (await coordinator.exists(`${dir.claims}/${name}`)) !== null)
          report.left.push({
            path: `${dir.path}/${name}`,
            why: 'a zoott 0.1.0 bridge is publishing it (its claim exists); it removes it once published',
          });
        else await moveOne(coordinator, `${dir.path}/${name}`, to, acl, report);
    }
    try {
      await coordinator.delete(dir.path);
      report.removed.push(dir.path);
    } catch (err) {
      if (isZoottError(err, 'NOT_EMPTY')) continue; // a 0.1.0 worker published meanwhile
      if (!isZoottError(err, 'NO_NODE'))
        report.left.push({ path: dir.path, why: `not removed: ${String(err)}` });
    }
  }
  // A bridge's claims folder and an exchange node left empty go too, when these credentials
  // may delete them (a live claim, or another world's directory, keeps them).
  for (const dir of dirs)
    if (dir.claims) await coordinator.delete(dir.claims).catch(() => undefined);
  for (const exchange of new Set(dirs.map((d) => `${LEGACY_REPLY_ROOT}/${d.exchange}`)))
    await coordinator.delete(exchange).catch(() => undefined);
  return report;
}

async function moveOne(
  coordinator: Coordinator,
  from: string,
  dir: string,
  acl: readonly Acl[],
  report: LegacyMove,
): Promise<void> {
  let got: Awaited<ReturnType<Coordinator['get']>>;
  let own: Acl[];
  try {
    [got, own] = await Promise.all([
      coordinator.get(from),
      coordinator.getAcl(from).then((a) => a.acl),
    ]);
  } catch (err) {
    if (isZoottError(err, 'NO_NODE')) return; // consumed meanwhile
    if (!isZoottError(err, 'NO_AUTH')) throw err;
    report.left.push({ path: from, why: 'these credentials may not read it' });
    return;
  }
  if (aclText(own) !== aclText(acl)) {
    report.left.push({
      path: from,
      why: `its ACL [${aclText(own)}] is not the world's: anyone may have written it, so it is not moved into the world's reply area`,
    });
    return;
  }
  try {
    const [made] = await coordinator.multi([
      { ...replyOp(dir, null, acl), data: got.data },
      { op: 'delete', path: from, version: got.stat.version },
    ]);
    report.moved.push({ from, to: made?.op === 'create' ? made.path : dir });
  } catch (err) {
    // Consumed (or replaced) meanwhile: it is someone's now, not ours to move.
    if (isZoottError(err, 'NO_NODE') || isZoottError(err, 'BAD_VERSION')) return;
    throw err;
  }
}

/**
 * What `zoott doctor` reports of `world`'s zoott 0.1.0 leftovers: each reply directory still
 * holding its results (`--repair`, or `init`, moves them), and race state of its races (a
 * race a 0.1.0 worker runs uses it; removed by hand once none does).
 */
export async function legacyFindings(coordinator: Coordinator, world: string): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const dir of await legacyReplyDirs(coordinator, world)) {
    const count = (await coordinator.children(dir.path).catch(missingIsEmpty)).length;
    findings.push({
      kind: 'legacy',
      path: dir.path,
      detail: `reply directory of zoott 0.1.0 (shared by every world) holding ${count} result(s) of world ${world}; this release reads ${replyDir(addressOf(dir), world)}: \`zoott doctor --repair\` or \`zoott init ${world}\` moves them there`,
      repair: 'migrate',
    });
  }
  for (const path of await legacyRaceState(coordinator, world))
    findings.push({
      kind: 'legacy',
      path,
      detail: `race state of zoott 0.1.0 for a race of world ${world}; this release keeps it under ${racesRoot(world)}: once no 0.1.0 worker runs the race, remove it with the world's credentials (zkCli.sh: deleteall ${path})`,
      repair: 'none',
    });
  return findings;
}
