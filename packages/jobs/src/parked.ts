import { type Acl, type Coordinator, isZoottError, type Op, ZoottError } from '@zoott/core';
import { decodeJson, encodeJson, ensureWorldPath, parkedRoot } from '@zoott/core/internal';
import { replyRoot } from './constants.js';
import { aclText, checkReplyPath, worldAcl } from './reply.js';

/*
 * Parked results: results the AMQP bridge could not publish (the broker refused the
 * exchange, the exchange does not exist, no queue was bound to the routing key) after
 * retrying each for a while. They leave the reply directory, so they never hold up the
 * results behind them, and wait in `/zoott_~parked/<world>/<name>` for an operator: `zoott
 * parked` lists them, puts them back for another try, or drops them; `zoott doctor` reports
 * them. Each node holds the result as it was recorded and where it came from.
 */

/** What a parked node holds. */
export interface ParkedData {
  /** The reply directory the result was taken from (where a retry puts it back). */
  from: string;
  /** Where it was to be published. */
  exchange: string;
  routingkey: string;
  /** The last refusal, as the broker or the bridge said it. */
  reason: string;
  /** Publications tried. */
  attempts: number;
  /** ISO 8601 times of the first failure and of the parking. */
  firstFailedAt: string;
  parkedAt: string;
  /** The result as the worker recorded it. */
  result: unknown;
}

/** A parked result, as listed. */
export interface ParkedResult extends ParkedData {
  name: string;
  path: string;
  version: number;
}

/** Why a result is parked, and how hard it was tried: what {@link parkOps} records. */
export type Parking = Omit<ParkedData, 'parkedAt' | 'result'> & { parkedAt?: string };

/**
 * The world's node in the parked area, made as `init` makes it when missing (a world made
 * before the area existed): the shared `/zoott_~parked` world:anyone cr, the world's node
 * with `acl`.
 */
async function ensureParkedRoot(
  coordinator: Coordinator,
  world: string,
  acl: readonly Acl[],
): Promise<void> {
  const root = parkedRoot(world);
  if ((await coordinator.exists(root)) !== null) return;
  await ensureWorldPath(coordinator, root, acl);
}

/**
 * The ops that park the result at `resultPath` (read at `version`, holding `result`): create
 * its parked node (same name, the world's ACL) and delete it from its reply directory, with
 * `extra` (the bridge's claim) deleted too, for one multi. The parked area is created first
 * when missing.
 */
export async function parkOps(
  coordinator: Coordinator,
  world: string,
  acl: readonly Acl[],
  resultPath: string,
  version: number,
  result: unknown,
  parking: Parking,
): Promise<Op[]> {
  await ensureParkedRoot(coordinator, world, acl);
  const name = resultPath.slice(resultPath.lastIndexOf('/') + 1);
  const data: ParkedData = {
    ...parking,
    parkedAt: parking.parkedAt ?? new Date().toISOString(),
    result,
  };
  return [
    { op: 'create', path: `${parkedRoot(world)}/${name}`, data: encodeJson(data), acl },
    { op: 'delete', path: resultPath, version },
  ];
}

/** Whether `value` is a parked node's data. */
function isParked(value: unknown): value is ParkedData {
  if (typeof value !== 'object' || value === null) return false;
  const fields = value as Record<string, unknown>;
  return (
    typeof fields.from === 'string' &&
    typeof fields.routingkey === 'string' &&
    typeof fields.exchange === 'string' &&
    typeof fields.reason === 'string' &&
    'result' in fields
  );
}

/** A node in the parked area that is not a parked result, and why it is not. */
export interface UnreadParked {
  name: string;
  path: string;
  why: 'not under the world ACL' | 'not JSON' | 'not a parked result';
}

/**
 * The world's parked area: its parked results, oldest parked first, and the nodes there that
 * are not parked results (planted under another ACL, not JSON, or JSON of another shape),
 * which are never retried or dropped by name and are left to `zoott doctor`.
 */
export async function readParkedArea(
  coordinator: Coordinator,
  world: string,
): Promise<{ parked: ParkedResult[]; unread: UnreadParked[] }> {
  const root = parkedRoot(world);
  let names: string[];
  try {
    names = await coordinator.children(root);
  } catch (err) {
    if (isZoottError(err, 'NO_NODE')) return { parked: [], unread: [] };
    throw err;
  }
  const acl = aclText(await worldAcl(coordinator, world));
  const parked: ParkedResult[] = [];
  const unread: UnreadParked[] = [];
  await Promise.all(
    names.map(async (name) => {
      const path = `${root}/${name}`;
      try {
        const [got, nodeAcl] = await Promise.all([coordinator.get(path), coordinator.getAcl(path)]);
        if (aclText(nodeAcl.acl) !== acl) {
          unread.push({ name, path, why: 'not under the world ACL' });
          return;
        }
        const data = decodeJson<unknown>(got.data, path);
        if (isParked(data)) parked.push({ ...data, name, path, version: got.stat.version });
        else unread.push({ name, path, why: 'not a parked result' });
      } catch (err) {
        // Gone since the listing (dropped or retried by someone else).
        if (isZoottError(err, 'NO_NODE')) return;
        if (isZoottError(err, 'BAD_ARGUMENTS')) {
          unread.push({ name, path, why: 'not JSON' });
          return;
        }
        throw err;
      }
    }),
  );
  // Parked in the same millisecond: the server's sequence at the end of the name orders them
  // (a protected create's random marker comes before it, so the whole name does not).
  const seq = (name: string) => /\d{10}$/.exec(name)?.[0] ?? '';
  parked.sort(
    (a, b) =>
      a.parkedAt.localeCompare(b.parkedAt) ||
      seq(a.name).localeCompare(seq(b.name)) ||
      a.name.localeCompare(b.name),
  );
  unread.sort((a, b) => a.name.localeCompare(b.name));
  return { parked, unread };
}

/**
 * The world's parked results, oldest parked first. Only nodes under the world's ACL that hold
 * a parked result are listed; anything else there is left to `zoott doctor` (see
 * {@link readParkedArea}, which names them).
 */
export async function listParked(coordinator: Coordinator, world: string): Promise<ParkedResult[]> {
  return (await readParkedArea(coordinator, world)).parked;
}

/** One parked result by name. @throws ZoottError NO_NODE naming it when there is none. */
async function parkedOne(
  coordinator: Coordinator,
  world: string,
  name: string,
): Promise<ParkedResult> {
  const found = (await listParked(coordinator, world)).find((p) => p.name === name);
  if (!found)
    throw new ZoottError('NO_NODE', `no parked result ${name} in world ${world}`, {
      path: `${parkedRoot(world)}/${name}`,
    });
  return found;
}

/**
 * Puts a parked result back into the reply directory it came from, as a new result (the
 * bridges then try to publish it again), and removes it from the parked area, in one multi.
 * Returns the new result's path.
 *
 * @throws ZoottError NO_NODE when there is no such parked result, NO_AUTH when its reply
 * directory is not under the world's ACL.
 */
export async function retryParked(
  coordinator: Coordinator,
  world: string,
  name: string,
): Promise<string> {
  const parked = await parkedOne(coordinator, world, name);
  if (!parked.from.startsWith(`${replyRoot(world)}/`))
    throw new ZoottError(
      'NO_AUTH',
      `parked result ${name} names ${parked.from}, not a reply path of world ${world}`,
      { path: parked.path },
    );
  const acl = await worldAcl(coordinator, world);
  await checkReplyPath(coordinator, parked.from, acl);
  const results = await coordinator.multi([
    {
      op: 'create',
      path: `${parked.from}/result-`,
      data: encodeJson(parked.result),
      sequential: true,
      acl,
    },
    { op: 'delete', path: parked.path, version: parked.version },
  ]);
  const created = results[0];
  return created?.op === 'create' ? created.path : parked.from;
}

/** Removes a parked result for good. @throws ZoottError NO_NODE when there is none. */
export async function dropParked(
  coordinator: Coordinator,
  world: string,
  name: string,
): Promise<void> {
  const parked = await parkedOne(coordinator, world, name);
  await coordinator.delete(parked.path, parked.version);
}
