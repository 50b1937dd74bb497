import {
  type Acl,
  type Coordinator,
  isZoottError,
  type Op,
  type Stat,
  ZoottError,
} from '@zoott/core';
import {
  decodeJson,
  encodeJson,
  ensureWorldPath,
  permsToShort,
  refusedBy,
  worldRoot,
} from '@zoott/core/internal';
import { DEFAULT_EXCHANGE, replyRoot } from './constants.js';

/** Where a result is published: Yothalot's exchange and routing key. */
export interface ReplyAddress {
  /** Missing or `""` means the default exchange (stored as `_default`). */
  exchange?: string;
  routingkey: string;
}

/** A node name must not hold '/' or control characters (ZooKeeper rejects or mangles them). */
function segmentProblem(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f || code === 0x2f) return true;
  }
  return false;
}

function segment(value: unknown, field: string): string {
  if (typeof value !== 'string')
    throw new ZoottError('INVALID_JOB', `${field}: must be a string, got ${typeof value}`, {
      field,
    });
  if (value.length === 0 || value === '.' || value === '..' || value.length > 200)
    throw new ZoottError(
      'INVALID_JOB',
      `${field} ${JSON.stringify(value)}: must be 1..200 characters and not '.' or '..'`,
      { field },
    );
  if (segmentProblem(value))
    throw new ZoottError(
      'INVALID_JOB',
      `${field} ${JSON.stringify(value)}: must not contain '/' or control characters (it is a node name)`,
      { field },
    );
  return value;
}

/**
 * An exchange name whose reply path is another's: `_default` is where the default exchange's
 * (`""`) results go. A job naming it would share that path (its results read by the default
 * exchange's consumer), so it is refused. (Race state has an area of its own, so an exchange
 * named `races` has a reply path like any other.)
 */
const RESERVED_EXCHANGES: ReadonlyMap<string, string> = new Map([
  [
    DEFAULT_EXCHANGE,
    `it is the reply path of the default exchange (""): leave exchange out or give ""`,
  ],
]);

/**
 * The exchange and routing key of an address, checked as node names (a missing or empty
 * exchange is the default exchange, stored as `_default`).
 *
 * @throws ZoottError INVALID_JOB when exchange or routing key cannot be a node name, or the
 * exchange is one whose reply path is another's (`_default`).
 */
export function replySegments(address: ReplyAddress): { exchange: string; routingkey: string } {
  const exchange =
    address.exchange === undefined || address.exchange === ''
      ? DEFAULT_EXCHANGE
      : segment(address.exchange, 'exchange');
  const taken = address.exchange ? RESERVED_EXCHANGES.get(address.exchange) : undefined;
  if (taken !== undefined)
    throw new ZoottError(
      'INVALID_JOB',
      `exchange ${JSON.stringify(address.exchange)}: is reserved (${taken})`,
      { field: 'exchange' },
    );
  return { exchange, routingkey: segment(address.routingkey, 'routingkey') };
}

/**
 * The reply directory of an address in `world`'s reply area:
 * `/zoott_~replies/<world>/<exchange>/<routingkey>`. Results are sequential children
 * `result-<seq>` in publication order. Each world has its own: two worlds publishing to the
 * same exchange and routing key never share a node.
 *
 * @throws ZoottError INVALID_JOB when exchange or routing key cannot be a node name,
 * INVALID_CONFIG for a bad world name.
 */
export function replyDir(address: ReplyAddress, world: string): string {
  const { exchange, routingkey } = replySegments(address);
  return `${replyRoot(world)}/${exchange}/${routingkey}`;
}

/**
 * The ACL of a world: the ACL its root node `/zoott_<world>` carries on the server (with
 * ZooKeeper's `auth` entries already expanded to the identities they stand for). Reply
 * paths are trusted only when they carry exactly this ACL.
 *
 * @throws ZoottError NO_SUCH_TASK when the world does not exist.
 */
export async function worldAcl(coordinator: Coordinator, world: string): Promise<Acl[]> {
  const root = worldRoot(world);
  try {
    return (await coordinator.getAcl(root)).acl;
  } catch (err) {
    if (isZoottError(err, 'NO_NODE'))
      throw new ZoottError(
        'NO_SUCH_TASK',
        `world ${JSON.stringify(world)} does not exist (no ${root}): its reply paths cannot be trusted without it`,
        { path: root, cause: err },
      );
    throw err;
  }
}

/** `scheme:id:perms` entries, sorted: one text per ACL, for comparing and for messages. */
export function aclText(acl: readonly Acl[]): string {
  return acl
    .map((a) => `${a.scheme}:${a.id}:${permsToShort(a.perms)}`)
    .sort()
    .join(', ');
}

/** What a read of a node's ACL found: the ACL, or that this session may not read it. */
type ReadAcl = Acl[] | 'unreadable';

/** The ACL of `path` as this session may read it (NO_NODE when there is no such node). */
async function readableAcl(coordinator: Coordinator, path: string): Promise<ReadAcl> {
  try {
    return (await coordinator.getAcl(path)).acl;
  } catch (err) {
    if (isZoottError(err, 'NO_AUTH')) return 'unreadable';
    throw err;
  }
}

/** {@link readableAcl}, `null` when there is no such node. */
async function readAcl(coordinator: Coordinator, path: string): Promise<ReadAcl | null> {
  try {
    return await readableAcl(coordinator, path);
  } catch (err) {
    if (isZoottError(err, 'NO_NODE')) return null;
    throw err;
  }
}

/**
 * Why a node carrying `actual` does not carry exactly `acl` (`null` when it does). A node
 * whose ACL this session may not even read is not the world's either.
 */
function aclMismatch(path: string, actual: ReadAcl, acl: readonly Acl[]): string | null {
  if (actual === 'unreadable') return `${path} has an ACL this session may not read`;
  return aclText(actual) === aclText(acl)
    ? null
    : `${path} has ACL [${aclText(actual)}], not the world's [${aclText(acl)}]`;
}

/** Why the node at `path` does not carry exactly `acl` (`null` when it does); NO_NODE if absent. */
async function aclProblem(
  coordinator: Coordinator,
  path: string,
  acl: readonly Acl[],
): Promise<string | null> {
  return aclMismatch(path, await readableAcl(coordinator, path), acl);
}

/** The `op` of the error {@link checkReplyPath} throws, so callers can tell it from a server's NO_AUTH. */
export const REPLY_PATH_CHECK = 'checkReplyPath';

/** The refusal of reply path `dir`, because of `problem` at `dir`. */
function replyPathRefused(dir: string, problem: string): ZoottError {
  return new ZoottError(
    'NO_AUTH',
    `reply path ${dir} is not under the world's ACL: ${problem}. Results there could be forged or deleted by others; nothing is published to or read from it (other routing keys are not affected). Remove it (or give it the world's ACL) with the world's credentials`,
    { path: dir, op: REPLY_PATH_CHECK },
  );
}

/**
 * Checks that the reply directory carries exactly the world's ACL. Then nobody outside that
 * ACL can have created a result under it or delete one (a delete needs DELETE on the
 * directory), and it cannot be replaced while it holds a result. The exchange node above it
 * is not checked: its ACL decides who may make new routing keys there or delete an empty
 * one, which can refuse one routing key (a directory made again with another ACL is refused
 * by this check) but never forge a result; `zoott doctor` reports it.
 *
 * @throws ZoottError NO_AUTH saying which ACL the directory has.
 */
export async function checkReplyPath(
  coordinator: Coordinator,
  dir: string,
  acl: readonly Acl[],
): Promise<void> {
  const problem = await aclProblem(coordinator, dir, acl);
  if (problem) throw replyPathRefused(dir, problem);
}

/**
 * Creates what is missing of the reply directory `dir` of `world`, with `acl`, from the
 * directory up: nothing that exists is created again (a create is checked against its
 * parent's ACL before the node is looked for). The world's node in the reply area is made
 * as `init` makes it (for a world made by zoott 0.1.0).
 */
async function ensurePath(
  coordinator: Coordinator,
  world: string,
  dir: string,
  acl: readonly Acl[],
  leafData?: Uint8Array,
): Promise<void> {
  const exchange = dir.slice(0, dir.lastIndexOf('/'));
  const create = async (path: string, data?: Uint8Array): Promise<'made' | 'missing parent'> => {
    try {
      await coordinator.create(path, data, { acl });
    } catch (err) {
      if (isZoottError(err, 'NO_NODE')) return 'missing parent';
      // A node of the world that someone else holds: say which, and what only they can do.
      if (isZoottError(err, 'NO_AUTH')) throw await refusedBy(coordinator, path, acl);
      if (!isZoottError(err, 'NODE_EXISTS')) throw err;
    }
    return 'made';
  };
  if ((await create(dir, leafData)) === 'made') return;
  if ((await create(exchange)) === 'missing parent') {
    await ensureWorldPath(coordinator, replyRoot(world), acl);
    await create(exchange);
  }
  await create(dir, leafData);
}

/** The data of a reply directory made by `world`: `{"world": "<world>"}`. */
export function replyDirOwnerData(world: string): Uint8Array {
  return encodeJson({ world });
}

/**
 * Makes sure the reply directory of an address exists in `world`'s reply area, with the
 * world's ACL (`acl`, see {@link worldAcl}), creating what is missing (safe against
 * concurrent callers), and returns its path: a multi that publishes a result cannot create
 * the directory on the way. A directory that already exists with another ACL is refused:
 * nothing is ever published into it.
 *
 * @throws ZoottError INVALID_JOB when exchange or routing key cannot be a node name,
 * NO_AUTH when the directory is not under the world's ACL.
 */
export async function ensureReplyDir(
  coordinator: Coordinator,
  address: ReplyAddress,
  world: string,
  acl: readonly Acl[],
): Promise<string> {
  const dir = replyDir(address, world);
  // The directory's data names the world that made it: that world's reaper removes the
  // results nobody consumed there (a directory made by someone else's code, the AMQP
  // bridge's, say, names none and is left alone).
  if ((await coordinator.exists(dir)) === null)
    await ensurePath(coordinator, world, dir, acl, replyDirOwnerData(world));
  await checkReplyPath(coordinator, dir, acl);
  return dir;
}

/**
 * The world's ACL (see {@link worldAcl}) and the reply directory of `address`, made sure of
 * as {@link ensureReplyDir} does. A publisher calls it for every result, so the usual case,
 * a directory that exists, takes one round trip: the world's and the directory's ACLs are
 * read together. A missing directory is created, and then checked, as {@link ensureReplyDir}
 * does.
 *
 * @throws ZoottError NO_SUCH_TASK when the world does not exist, INVALID_JOB when exchange
 * or routing key cannot be a node name, NO_AUTH when the directory is not under the world's
 * ACL.
 */
export async function prepareReply(
  coordinator: Coordinator,
  address: ReplyAddress,
  world: string,
): Promise<{ dir: string; acl: Acl[] }> {
  const dir = replyDir(address, world);
  const [acl, dirAcl] = await Promise.all([
    worldAcl(coordinator, world),
    readAcl(coordinator, dir),
  ]);
  if (dirAcl === null) return { dir: await ensureReplyDir(coordinator, address, world, acl), acl };
  const problem = aclMismatch(dir, dirAcl, acl);
  if (problem) throw replyPathRefused(dir, problem);
  return { dir, acl };
}

/**
 * The op that publishes a result JSON under a reply directory that {@link ensureReplyDir}
 * made sure of: the same sequential `result-` node {@link publishResult} creates, with the
 * world's ACL, for use inside a multi.
 */
export function replyOp(dir: string, result: unknown, acl: readonly Acl[]): Op & { op: 'create' } {
  return {
    op: 'create',
    path: `${dir}/result-`,
    data: encodeJson(result),
    sequential: true,
    acl,
  };
}

/**
 * Publishes a result JSON under the address of a world's reply channel (creating the
 * directories it needs, with the world's ACL) and returns the new node's path.
 *
 * @throws ZoottError NO_AUTH when the reply path exists with another ACL than the world's.
 */
export async function publishResult(
  coordinator: Coordinator,
  address: ReplyAddress,
  result: unknown,
  options: { world: string },
): Promise<string> {
  const { dir, acl } = await prepareReply(coordinator, address, options.world);
  const { path, data, sequential } = replyOp(dir, result, acl);
  return coordinator.create(path, data, { sequential, acl });
}

/** The server's sequence number at the end of a `result-…NNNNNNNNNN` name. */
function sequenceOf(name: string): number {
  const match = /(\d{10})$/.exec(name);
  return match ? Number(match[1]) : Number.POSITIVE_INFINITY;
}

/** Options of `waitForResult`: the reply address, a timeout, a signal, whether to consume. */
export interface WaitForResultOptions extends ReplyAddress {
  /**
   * The world whose jobs publish here. Results are accepted only from a reply path that
   * carries this world's ACL, and only result nodes with that ACL (see {@link worldAcl}).
   */
  world: string;
  /** Told about a result node that is skipped because its ACL is not the world's. */
  onUntrusted?: (path: string, why: string) => void;
  /** Give up after this long (WAIT_TIMEOUT). Default: wait as long as it takes. */
  timeoutMs?: number;
  /**
   * Delete the result once read (default true), so each result is taken by exactly one
   * waiter, like a message from a queue. With `false` the oldest result is only read.
   */
  consume?: boolean;
  signal?: AbortSignal;
  /** Result node names to pass over (e.g. those already there when a waiter began). */
  skip?: (name: string) => boolean;
}

/** A result read from the reply channel. */
export interface ReceivedResult<T = unknown> {
  path: string;
  result: T;
}

/**
 * Waits for the next (oldest) result published under an exchange and routing key and
 * returns it, by default consuming it. Of concurrent consumers exactly one gets each
 * result (the delete with the read version decides).
 *
 * Only results written under the world's ACL are accepted: the reply path must carry it
 * (else this fails at once, NO_AUTH), and a result node with another ACL is skipped, left
 * in place and reported to `onUntrusted`.
 *
 * @throws ZoottError WAIT_TIMEOUT after `timeoutMs`, ABORTED when `signal` aborts, NO_AUTH
 * when the reply path is not under the world's ACL, NO_SUCH_TASK when the world is missing.
 */
export async function waitForResult<T = unknown>(
  coordinator: Coordinator,
  options: WaitForResultOptions,
): Promise<ReceivedResult<T>> {
  const dir = replyDir(options, options.world);
  const acl = await worldAcl(coordinator, options.world);
  const consume = options.consume !== false;
  const deadline =
    options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs;
  for (;;) {
    if (options.signal?.aborted)
      throw new ZoottError('ABORTED', `stopped waiting for a result under ${dir}`, {
        path: dir,
      });
    let wake!: () => void;
    const changed = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const names = await listOrWatch(coordinator, dir, () => wake());
    if (names !== null) await checkReplyPath(coordinator, dir, acl);
    for (const name of (names ?? []).sort((a, b) => sequenceOf(a) - sequenceOf(b))) {
      if (options.skip?.(name)) continue;
      const path = `${dir}/${name}`;
      let data: Uint8Array;
      let stat: Stat;
      try {
        ({ data, stat } = await coordinator.get(path));
        const problem = await aclProblem(coordinator, path, acl);
        if (problem) {
          options.onUntrusted?.(path, problem);
          continue;
        }
        if (consume) await coordinator.delete(path, stat.version);
      } catch (err) {
        // Another consumer took it first: try the next one.
        if (isZoottError(err, 'NO_NODE') || isZoottError(err, 'BAD_VERSION')) continue;
        throw err;
      }
      return { path, result: decodeJson<T>(data, path) };
    }
    const left = deadline - Date.now();
    if (left <= 0)
      throw new ZoottError(
        'WAIT_TIMEOUT',
        `no result under ${dir} within ${options.timeoutMs} ms`,
        {
          path: dir,
        },
      );
    await waitFor(changed, left, options.signal, coordinator);
  }
}

/**
 * Children of `dir` with a children watch, or (`null`) an exists watch when it is not
 * there yet.
 */
async function listOrWatch(
  coordinator: Coordinator,
  dir: string,
  watch: () => void,
): Promise<string[] | null> {
  for (;;) {
    try {
      return await coordinator.children(dir, { watch });
    } catch (err) {
      if (!isZoottError(err, 'NO_NODE')) throw err;
    }
    if ((await coordinator.exists(dir, { watch })) === null) return null;
  }
}

/** Resolves when `changed` does, the time is up, the signal aborts or the session changes. */
function waitFor(
  changed: Promise<void>,
  ms: number,
  signal: AbortSignal | undefined,
  coordinator: Coordinator,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      off();
      signal?.removeEventListener('abort', finish);
      resolve();
    };
    const timer = setTimeout(finish, Math.min(ms, 2 ** 31 - 1));
    // A lost session drops its watches: look again instead of waiting forever.
    const off = coordinator.onSession((event) => {
      if (event.type === 'reconnected' || event.type === 'connected' || event.type === 'lost')
        finish();
    });
    signal?.addEventListener('abort', finish, { once: true });
    void changed.then(finish);
  });
}
