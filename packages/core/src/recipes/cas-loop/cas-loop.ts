import type { Stat } from '../../contract/coordinator.js';
import { isZoottError } from '../../contract/errors.js';
import { decodeJson, encodeJson, utf8 } from '../../contract/paths.js';
import {
  type ConnectFn,
  type CoordinatorSource,
  openCoordinator,
} from '../connection/coordinator-source.js';

/** Sets the value the current round writes; not calling it ends the loop without a write. */
export type CasSetter<T> = (value: T) => void;

/** Options of `casLoop`: JSON coding of the value, and how to connect when not given a Coordinator. */
export interface CasLoopOptions {
  /** Decode the node as JSON and encode what is set as JSON (default `true`). */
  json?: boolean;
  /** Opens a session when `source` is not a Coordinator (see `ConnectFn`). */
  connect?: ConnectFn;
}

/** One round of a CAS loop: the current value, the setter, and the stat it was read at. */
export type CasRound<T, W = T> = [current: T, set: CasSetter<W>, stat: Stat];

/**
 * zkutil's `cas_loop`: compare-and-set as an async iterator.
 *
 * ```ts
 * for await (const [current, set] of casLoop(zk, '/counter')) set(current + 1);
 * ```
 *
 * Each round reads the node and yields `[current, set, stat]`. When the loop body calls
 * `set(value)`, the value is written with the version that was read: if another writer got
 * there first (BAD_VERSION) the next round re-reads and the body runs again; once a write
 * lands, the iterator ends. A body that does not call `set`, or leaves the loop with
 * `break`/`return`/`throw`, writes nothing.
 *
 * With `json: false` the value is the raw `Uint8Array` and `set` takes a `Uint8Array` or a
 * string (written as UTF-8).
 *
 * `source` may be a Coordinator or, with `connect`, a hosts string or config; a connection
 * the loop opened is closed when the loop ends, however it ends.
 *
 * @throws ZoottError NO_NODE if the node does not exist; other errors of `get`/`set` as is.
 */
export function casLoop<T = unknown>(
  source: CoordinatorSource,
  path: string,
  options?: CasLoopOptions & { json?: true },
): AsyncGenerator<CasRound<T>, void, undefined>;
export function casLoop(
  source: CoordinatorSource,
  path: string,
  options: CasLoopOptions & { json: false },
): AsyncGenerator<CasRound<Uint8Array, Uint8Array | string>, void, undefined>;
export async function* casLoop(
  source: CoordinatorSource,
  path: string,
  options: CasLoopOptions = {},
): AsyncGenerator<CasRound<unknown, never>, void, undefined> {
  const json = options.json ?? true;
  const { coordinator: zk, owned } = await openCoordinator(source, options.connect);
  try {
    for (;;) {
      const { data, stat } = await zk.get(path);
      const current: unknown = json ? decodeJson(data, path) : data;
      let pending: { value: unknown } | undefined;
      const set = (value: unknown): void => {
        pending = { value };
      };
      yield [current, set, stat];
      if (!pending) return;
      const bytes = json
        ? encodeJson(pending.value)
        : typeof pending.value === 'string'
          ? utf8.encode(pending.value)
          : (pending.value as Uint8Array);
      try {
        await zk.set(path, bytes, stat.version);
        return;
      } catch (err) {
        if (!isZoottError(err, 'BAD_VERSION')) throw err;
        // Another writer won this round; read again and let the body recompute.
      }
    }
  } finally {
    if (owned) await zk.close().catch(() => undefined);
  }
}
