import { type Coordinator, isZoottError, type Op, type Stat, ZoottError } from '@zoott/core';
import { decodeJson, encodeJson } from '@zoott/core/internal';
import { DEFAULT_EXCHANGE, REPLY_ROOT } from './constants.js';

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
 * The reply directory of an address: `/zoott_r/<exchange>/<routingkey>`. Results are
 * sequential children `result-<seq>` in publication order.
 *
 * @throws ZoottError INVALID_JOB when exchange or routing key cannot be a node name.
 */
export function replyDir(address: ReplyAddress): string {
  const exchange =
    address.exchange === undefined || address.exchange === ''
      ? DEFAULT_EXCHANGE
      : segment(address.exchange, 'exchange');
  return `${REPLY_ROOT}/${exchange}/${segment(address.routingkey, 'routingkey')}`;
}

async function ensurePath(c: Coordinator, path: string): Promise<void> {
  let at = '';
  for (const part of path.split('/').slice(1)) {
    at += `/${part}`;
    try {
      await c.create(at);
    } catch (err) {
      if (!isZoottError(err, 'NODE_EXISTS')) throw err;
    }
  }
}

/**
 * Makes sure the reply directory of an address exists (creating what is missing, safe
 * against concurrent callers) and returns its path: a multi that publishes a result
 * cannot create the directory on the way.
 *
 * @throws ZoottError INVALID_JOB when exchange or routing key cannot be a node name.
 */
export async function ensureReplyDir(c: Coordinator, address: ReplyAddress): Promise<string> {
  const dir = replyDir(address);
  if ((await c.exists(dir)) === null) await ensurePath(c, dir);
  return dir;
}

/**
 * The op that publishes a result JSON under an existing reply directory (see
 * {@link replyDir}): the same sequential `result-` node {@link publishResult} creates, for
 * use inside a multi.
 */
export function replyOp(dir: string, result: unknown): Op & { op: 'create' } {
  return { op: 'create', path: `${dir}/result-`, data: encodeJson(result), sequential: true };
}

/**
 * Publishes a result JSON under the address (creating the directories it needs) and
 * returns the new node's path.
 */
export async function publishResult(
  c: Coordinator,
  address: ReplyAddress,
  result: unknown,
): Promise<string> {
  const dir = replyDir(address);
  const { path, data, sequential } = replyOp(dir, result);
  try {
    return await c.create(path, data, { sequential });
  } catch (err) {
    if (!isZoottError(err, 'NO_NODE')) throw err;
    await ensurePath(c, dir);
    return c.create(path, data, { sequential });
  }
}

/** The server's sequence number at the end of a `result-…NNNNNNNNNN` name. */
function sequenceOf(name: string): number {
  const m = /(\d{10})$/.exec(name);
  return m ? Number(m[1]) : Number.POSITIVE_INFINITY;
}

/** Options of `waitForResult`: the reply address, a timeout, a signal, whether to consume. */
export interface WaitForResultOptions extends ReplyAddress {
  /** Give up after this long (WAIT_TIMEOUT). Default: wait as long as it takes. */
  timeoutMs?: number;
  /**
   * Delete the result once read (default true), so each result is taken by exactly one
   * waiter, like a message from a queue. With `false` the oldest result is only read.
   */
  consume?: boolean;
  signal?: AbortSignal;
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
 * @throws ZoottError WAIT_TIMEOUT after `timeoutMs`, ABORTED when `signal` aborts.
 */
export async function waitForResult<T = unknown>(
  c: Coordinator,
  options: WaitForResultOptions,
): Promise<ReceivedResult<T>> {
  const dir = replyDir(options);
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
    for (const name of names.sort((a, b) => sequenceOf(a) - sequenceOf(b))) {
      const path = `${dir}/${name}`;
      let data: Uint8Array;
      let stat: Stat;
      try {
        ({ data, stat } = await c.get(path));
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

/** Children of `dir` with a children watch, or an exists watch when it is not there yet. */
async function listOrWatch(c: Coordinator, dir: string, watch: () => void): Promise<string[]> {
  for (;;) {
    try {
      return await c.children(dir, { watch });
    } catch (err) {
      if (!isZoottError(err, 'NO_NODE')) throw err;
    }
    if ((await c.exists(dir, { watch })) === null) return [];
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
