import {
  type Acl,
  type Coordinator,
  isZoottError,
  type Op,
  type Stat,
  ZoottError,
} from '@zoott/core';
import { decodeJson, encodeJson, permsToShort, worldRoot } from '@zoott/core/internal';
import { DEFAULT_EXCHANGE, RACES_ROOT, REPLY_ROOT } from './constants.js';

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
 * Exchange names whose reply path is another's: `_default` is where the default exchange's
 * (`""`) results go, and `races` is where races keep their state. A job naming one of them
 * would share that path (its results read by the wrong consumer, or a race's state taken
 * for results), so it is refused.
 */
const RESERVED_EXCHANGES: ReadonlyMap<string, string> = new Map([
  [
    DEFAULT_EXCHANGE,
    `it is the reply path of the default exchange (""): leave exchange out or give ""`,
  ],
  [RACES_ROOT.slice(REPLY_ROOT.length + 1), `${RACES_ROOT} holds the state of races`],
]);

/**
 * The reply directory of an address: `/zoott_r/<exchange>/<routingkey>`. Results are
 * sequential children `result-<seq>` in publication order.
 *
 * @throws ZoottError INVALID_JOB when exchange or routing key cannot be a node name, or the
 * exchange is one whose reply path is another's (`_default`, `races`).
 */
export function replyDir(address: ReplyAddress): string {
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
  return `${REPLY_ROOT}/${exchange}/${segment(address.routingkey, 'routingkey')}`;
}

/**
 * The ACL of a world: the ACL its root node `/zoott_<world>` carries on the server (with
 * ZooKeeper's `auth` entries already expanded to the identities they stand for). Reply
 * paths are trusted only when they carry exactly this ACL.
 *
 * @throws ZoottError NO_SUCH_TASK when the world does not exist.
 */
export async function worldAcl(c: Coordinator, world: string): Promise<Acl[]> {
  const root = worldRoot(world);
  try {
    return (await c.getAcl(root)).acl;
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
async function readableAcl(c: Coordinator, path: string): Promise<ReadAcl> {
  try {
    return (await c.getAcl(path)).acl;
  } catch (err) {
    if (isZoottError(err, 'NO_AUTH')) return 'unreadable';
    throw err;
  }
}

/** {@link readableAcl}, `null` when there is no such node. */
async function readAcl(c: Coordinator, path: string): Promise<ReadAcl | null> {
  try {
    return await readableAcl(c, path);
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
  c: Coordinator,
  path: string,
  acl: readonly Acl[],
): Promise<string | null> {
  return aclMismatch(path, await readableAcl(c, path), acl);
}

/** The `op` of the error {@link checkReplyPath} throws, so callers can tell it from a server's NO_AUTH. */
export const REPLY_PATH_CHECK = 'checkReplyPath';

/** The refusal of reply path `dir`, because of `problem` at `path` (its exchange node or itself). */
function replyPathRefused(dir: string, path: string, problem: string): ZoottError {
  return new ZoottError(
    'NO_AUTH',
    `reply path ${dir} is not under the world's ACL: ${problem}. Results there could be forged or deleted by others; nothing is published to or read from it. Remove it (or give it the world's ACL) with the world's credentials`,
    { path, op: REPLY_PATH_CHECK },
  );
}

/** The exchange node above a reply directory. */
const exchangeOf = (dir: string) => dir.slice(0, dir.lastIndexOf('/'));

/**
 * Checks that the exchange node and the reply directory both carry exactly the world's
 * ACL. Then nobody outside that ACL can have created a result under the directory, delete
 * one, or replace the directory (its parent is locked too, and a directory with children
 * cannot be deleted).
 *
 * @throws ZoottError NO_AUTH saying which node has which ACL.
 */
export async function checkReplyPath(
  c: Coordinator,
  dir: string,
  acl: readonly Acl[],
): Promise<void> {
  for (const path of [exchangeOf(dir), dir]) {
    const problem = await aclProblem(c, path, acl);
    if (problem) throw replyPathRefused(dir, path, problem);
  }
}

/**
 * Creates what is missing of `path`: `/zoott_r` with the session's default ACL (it is shared
 * by every world of the namespace), every node below it with `acl`.
 */
async function ensurePath(
  c: Coordinator,
  path: string,
  acl: readonly Acl[],
  leafData?: Uint8Array,
): Promise<void> {
  let at = '';
  for (const part of path.split('/').slice(1)) {
    at += `/${part}`;
    try {
      await c.create(at, at === path ? leafData : undefined, at === REPLY_ROOT ? {} : { acl });
    } catch (err) {
      if (!isZoottError(err, 'NODE_EXISTS')) throw err;
    }
  }
}

/** The data of a reply directory made by `world`: `{"world": "<world>"}`. */
export function replyDirOwnerData(world: string): Uint8Array {
  return encodeJson({ world });
}

/**
 * Makes sure the reply directory of an address exists, with the world's ACL (`acl`, see
 * {@link worldAcl}), creating what is missing (safe against concurrent callers), and
 * returns its path: a multi that publishes a result cannot create the directory on the
 * way. A directory or exchange node that already exists with another ACL (someone else
 * made it first) is refused: nothing is ever published into it.
 *
 * @throws ZoottError INVALID_JOB when exchange or routing key cannot be a node name,
 * NO_AUTH when the path is not under the world's ACL.
 */
export async function ensureReplyDir(
  c: Coordinator,
  address: ReplyAddress,
  acl: readonly Acl[],
  owner?: string,
): Promise<string> {
  const dir = replyDir(address);
  // The directory's data names the world that made it: that world's reaper (and only it)
  // removes the results nobody consumed there, under that world's retention settings.
  if ((await c.exists(dir)) === null)
    await ensurePath(c, dir, acl, owner === undefined ? undefined : replyDirOwnerData(owner));
  await checkReplyPath(c, dir, acl);
  return dir;
}

/**
 * The world's ACL (see {@link worldAcl}) and the reply directory of `address`, made sure of
 * as {@link ensureReplyDir} does. A publisher calls it for every result, so the usual case,
 * a directory that exists, takes one round trip: the world's, the exchange's and the
 * directory's ACLs are read together (three sequential reads before). A missing directory
 * is created, and then checked, as {@link ensureReplyDir} does.
 *
 * @throws ZoottError NO_SUCH_TASK when the world does not exist, INVALID_JOB when exchange
 * or routing key cannot be a node name, NO_AUTH when the path is not under the world's ACL.
 */
export async function prepareReply(
  c: Coordinator,
  address: ReplyAddress,
  world: string,
): Promise<{ dir: string; acl: Acl[] }> {
  const dir = replyDir(address);
  const exchange = exchangeOf(dir);
  const [acl, exchangeAcl, dirAcl] = await Promise.all([
    worldAcl(c, world),
    readAcl(c, exchange),
    readAcl(c, dir),
  ]);
  if (exchangeAcl === null || dirAcl === null)
    return { dir: await ensureReplyDir(c, address, acl, world), acl };
  for (const [path, actual] of [
    [exchange, exchangeAcl],
    [dir, dirAcl],
  ] as const) {
    const problem = aclMismatch(path, actual, acl);
    if (problem) throw replyPathRefused(dir, path, problem);
  }
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
  c: Coordinator,
  address: ReplyAddress,
  result: unknown,
  options: { world: string },
): Promise<string> {
  const { dir, acl } = await prepareReply(c, address, options.world);
  const { path, data, sequential } = replyOp(dir, result, acl);
  return c.create(path, data, { sequential, acl });
}

/** The server's sequence number at the end of a `result-…NNNNNNNNNN` name. */
function sequenceOf(name: string): number {
  const m = /(\d{10})$/.exec(name);
  return m ? Number(m[1]) : Number.POSITIVE_INFINITY;
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
  c: Coordinator,
  options: WaitForResultOptions,
): Promise<ReceivedResult<T>> {
  const dir = replyDir(options);
  const acl = await worldAcl(c, options.world);
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
    const names = await listOrWatch(c, dir, () => wake());
    if (names !== null) await checkReplyPath(c, dir, acl);
    for (const name of (names ?? []).sort((a, b) => sequenceOf(a) - sequenceOf(b))) {
      if (options.skip?.(name)) continue;
      const path = `${dir}/${name}`;
      let data: Uint8Array;
      let stat: Stat;
      try {
        ({ data, stat } = await c.get(path));
        const problem = await aclProblem(c, path, acl);
        if (problem) {
          options.onUntrusted?.(path, problem);
          continue;
        }
        if (consume) await c.delete(path, stat.version);
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
    await waitFor(changed, left, options.signal, c);
  }
}

/**
 * Children of `dir` with a children watch, or (`null`) an exists watch when it is not
 * there yet.
 */
async function listOrWatch(
  c: Coordinator,
  dir: string,
  watch: () => void,
): Promise<string[] | null> {
  for (;;) {
    try {
      return await c.children(dir, { watch });
    } catch (err) {
      if (!isZoottError(err, 'NO_NODE')) throw err;
    }
    if ((await c.exists(dir, { watch })) === null) return null;
  }
}

/** Resolves when `changed` does, the time is up, the signal aborts or the session changes. */
function waitFor(
  changed: Promise<void>,
  ms: number,
  signal: AbortSignal | undefined,
  c: Coordinator,
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
    const off = c.onSession((e) => {
      if (e.type === 'reconnected' || e.type === 'connected' || e.type === 'lost') finish();
    });
    signal?.addEventListener('abort', finish, { once: true });
    void changed.then(finish);
  });
}
