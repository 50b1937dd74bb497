import type { Coordinator, SessionEvent } from '../../contract/coordinator.js';
import { isZoottError, ZoottError } from '../../contract/errors.js';
import { decodeJson } from '../../contract/paths.js';
import {
  type ConnectFn,
  type CoordinatorSource,
  openCoordinator,
} from '../connection/coordinator-source.js';
import { Deadline, ONE_YEAR_MS, timeoutOrDefault, waitForSignal } from '../support/deadline.js';
import { Signal } from '../support/signal.js';
import { WaitTimeout } from '../waits/wait-timeout.js';

/** A JSON object, the only kind of node value a CachedReader accepts. */
export type JsonObject = Record<string, unknown>;

/** Called after every change the reader applies: `(path, previous, current)`. */
export type CachedReaderCallback<T extends JsonObject> = (
  path: string,
  previous: T | null,
  current: T,
) => void;

/** Options of `CachedReader.open`: the change callback, and how to connect when not given a Coordinator. */
export interface CachedReaderOptions<T extends JsonObject> {
  callback?: CachedReaderCallback<T>;
  /** Opens a session when `source` is not a Coordinator (see `ConnectFn`). */
  connect?: ConnectFn;
}

function asObject<T>(data: Uint8Array, path: string): T {
  const value = decodeJson<unknown>(data, path);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ZoottError('BAD_ARGUMENTS', 'a CachedReader node must hold a JSON object', { path });
  }
  return value as T;
}

/**
 * zkutil's CachedReader: a read-only, dict-like (`Map`) view of a node holding a JSON object,
 * kept current by watches.
 *
 * ```ts
 * const conf = await CachedReader.open(zk, '/app/conf');
 * for (let i = 0; i < (conf.get('workers') as number); i++) spawn();
 * const [before, after] = (await conf.watch(60_000)) ?? [];
 * await conf.close();
 * ```
 *
 * When the node is deleted the view becomes `{}` until it is created again. When the
 * session is lost or closed the reader stops: `watch()` resolves `null` from then on.
 */
export class CachedReader<T extends JsonObject = JsonObject> extends Map<string, unknown> {
  readonly path: string;
  private readonly zk: Coordinator;
  private readonly owned: boolean;
  private readonly callback: CachedReaderCallback<T> | undefined;
  private current: [previous: T | null, current: T] = [null, {} as T];
  private seenMzxid = -1;
  private changed = new Signal();
  private stopped = false;
  private failure: unknown;
  private needsRefresh = false;
  private chain: Promise<void> = Promise.resolve();
  private readonly offSession: () => void;

  private constructor(
    zk: Coordinator,
    owned: boolean,
    path: string,
    options: CachedReaderOptions<T>,
  ) {
    super();
    this.zk = zk;
    this.owned = owned;
    this.path = path;
    this.callback = options.callback;
    this.offSession = zk.onSession((e) => this.onSession(e));
  }

  /**
   * Reads the node and starts watching it.
   *
   * @param source a Coordinator, or (with `options.connect`) a hosts string or config; a
   *   connection the reader opened is closed by `close()`.
   * @throws ZoottError NO_NODE if the node does not exist, BAD_ARGUMENTS if it does not hold
   *   a JSON object.
   */
  static async open<T extends JsonObject = JsonObject>(
    source: CoordinatorSource,
    path: string,
    options: CachedReaderOptions<T> = {},
  ): Promise<CachedReader<T>> {
    const { coordinator, owned } = await openCoordinator(source, options.connect);
    const reader = new CachedReader<T>(coordinator, owned, path, options);
    try {
      await reader.load(true);
    } catch (err) {
      await reader.close();
      throw err;
    }
    return reader;
  }

  /** The current value as a plain object (a snapshot; it is replaced, never mutated, on change). */
  get value(): T {
    return this.current[1];
  }

  /** Whether `close()` was called or the session ended. */
  get closed(): boolean {
    return this.stopped;
  }

  /**
   * Waits for the next change after the call and returns `[previous, current]`; returns
   * `null` once the reader is closed. Milliseconds; a missing timeout waits a year.
   *
   * @throws WaitTimeout (code WAIT_TIMEOUT) when no change comes in time.
   */
  async watch(timeoutMs?: number): Promise<[previous: T | null, current: T] | null> {
    const wait = timeoutOrDefault(timeoutMs, ONE_YEAR_MS);
    if (this.failure !== undefined) throw this.failure;
    if (this.stopped) return null;
    const signal = this.changed;
    if (!(await waitForSignal(signal, new Deadline(wait)))) {
      throw new WaitTimeout(`no change of ${this.path} within ${wait} ms`, { path: this.path });
    }
    if (this.failure !== undefined) throw this.failure;
    return this.stopped ? null : [this.current[0], this.current[1]];
  }

  /** Stops watching and the callback; wakes `watch()` with `null`; closes an owned connection. */
  async close(): Promise<void> {
    if (this.stopped && !this.owned) return;
    this.stop();
    if (this.owned) await this.zk.close().catch(() => undefined);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private stop(failure?: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    if (failure !== undefined) this.failure = failure;
    this.offSession();
    this.changed.fire();
  }

  private onSession(event: SessionEvent): void {
    if (event.type === 'lost' || event.type === 'closed') this.stop();
    else if (event.type === 'reconnected' && this.needsRefresh) this.refresh();
  }

  private refresh(): void {
    this.chain = this.chain.then(() => this.load(false));
  }

  private async load(initial: boolean): Promise<void> {
    if (this.stopped) return;
    this.needsRefresh = false;
    try {
      const { data, stat } = await this.zk.get(this.path, { watch: () => this.refresh() });
      // A duplicate refresh (two watches, or a reconnect) must not report a change twice.
      if (stat.mzxid === this.seenMzxid) return;
      this.seenMzxid = stat.mzxid;
      this.apply(asObject<T>(data, this.path), initial);
    } catch (err) {
      if (initial) throw err;
      if (isZoottError(err, 'NO_NODE')) {
        // Watch for the node to come back; until then the view is empty.
        const back = await this.zk
          .exists(this.path, { watch: () => this.refresh() })
          .catch(() => null);
        if (back) return this.load(false);
        if (this.seenMzxid !== 0) {
          this.seenMzxid = 0;
          this.apply({} as T, false);
        }
      } else if (isZoottError(err) && err.retryable) {
        this.needsRefresh = true;
      } else {
        this.stop(err);
      }
    }
  }

  private apply(next: T, initial: boolean): void {
    if (this.stopped) return;
    const previous = initial ? null : this.current[1];
    this.current = [previous, next];
    super.clear();
    for (const [key, value] of Object.entries(next)) super.set(key, value);
    if (initial) return;
    const woke = this.changed;
    this.changed = new Signal();
    woke.fire();
    this.callback?.(this.path, previous, next);
  }
}
