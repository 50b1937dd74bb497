import type { Coordinator } from '../contract/coordinator.js';
import { ZoottError } from '../contract/errors.js';
import { encodeJson } from '../contract/paths.js';
import type { EngineContext } from '../engine/context.js';
import {
  bucketOwners,
  RegistryView,
  stealWatchers,
  type WorkerInfo,
  workerTypesProblem,
} from '../engine/registry.js';
import type { Engine } from '../front/engine.js';
import { Reaper, type ReaperOptions } from '../retention/reaper.js';
import type { PeerPlace } from '../tree/ordering.js';

/** What a worker says about itself in its registry node. */
export interface WorkerIdentity {
  id: string;
  types: string[];
  host?: string;
  pid?: number;
  server?: string;
  /** It serves `filename` hints from a local data directory. */
  files?: boolean;
  /** Datasets it caches. */
  datasets?: string[];
  /**
   * When the worker started: its registry node says so on every write (a rebalance rewrites
   * the node, a renewed session re-creates it), so `zoott workers` shows its uptime.
   */
  startedAt: number;
}

/**
 * Least time between two listings of the registry by one worker in one registration. When N
 * workers join at once every registration fires every worker's watch: unpaced, each worker
 * listed the registry about once per registration (N² listings, each a reply of N names)
 * and rewrote its node each time its share moved.
 */
export const REGISTRY_PACE_MS = 200;
/**
 * Longest pace: while changes keep coming (a fleet joining), each re-read doubles the pace up
 * to this, so a join wave of T seconds costs each worker about T listings of the registry (a
 * reply of N names each) and as many rewrites of its node, not 5 T; a change after a quiet
 * spell this long is read at once again. Ownership settles within this of the last change.
 */
export const REGISTRY_PACE_MAX_MS = 1000;

/**
 * New registrations a listing reads before the shares are taken again (one multiRead
 * request); more are read behind the shares (a fleet joining at once).
 */
const READ_AT_ONCE = 32;

/** Most datasets one worker advertises: its registry node is read by every other worker. */
export const MAX_DATASETS = 256;
/** A dataset name: what fits in a registry node and reads plainly in `zoott workers`. */
const DATASET_NAME = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/;

/** Checks the datasets a worker advertises; INVALID_CONFIG naming the bad one. */
export function checkDatasets(datasets: unknown): string[] {
  const bad = (why: string) =>
    new ZoottError('INVALID_CONFIG', `datasets: ${why}`, { field: 'datasets' });
  if (!Array.isArray(datasets)) throw bad('must be a list of dataset names');
  if (datasets.length > MAX_DATASETS)
    throw bad(`${datasets.length} given, at most ${MAX_DATASETS} (each is listed in the registry)`);
  for (const dataset of datasets)
    if (typeof dataset !== 'string' || !DATASET_NAME.test(dataset))
      throw bad(
        `${JSON.stringify(dataset)} is not a dataset name (1-128 of letters, digits and . _ : @ / -, starting with a letter or digit)`,
      );
  return [...new Set(datasets as string[])];
}

/**
 * A worker's place in the world's registry: its ephemeral registry node (one per session)
 * and the buckets it owns by rendezvous hashing over the live registry nodes.
 */
export class WorkerMembership {
  /** Registry node of the current session, `null` while unregistered. */
  registryPath: string | null = null;
  /** The session the registry node belongs to. */
  private registeredSession: string | null = null;
  /** Buckets this worker owns now. */
  owned: number[] = [];
  /**
   * Buckets not owned here on which this worker keeps a steal watch (see `stealWatchers`),
   * `null` before the first registry read (every bucket, as a lone worker would).
   */
  private watching: ReadonlySet<number> | null = null;
  private registry: RegistryView | null = null;
  /** The registry changed (or was never read): it must be listed again. */
  private changed = true;
  /** A listing's new registrations were read: the shares are taken again with their info. */
  private readDone = false;
  /** The reads of a listing's new registrations, while they are out. */
  private reads: Promise<void> | null = null;
  /** What made the last background reads fail, thrown by the next rebalance. */
  private readFailure: unknown = null;
  /** A listing sent ahead of the worker's loop (see {@link listAhead}), while it is out. */
  private listing: Promise<void> | null = null;
  /** A listing was answered that the shares were not taken from yet. */
  private fresh = false;

  /**
   * The owned buckets must be recomputed: the registry changed, a listing sent ahead was
   * answered, or new registrations were read.
   */
  get dirty(): boolean {
    return this.changed || this.readDone || this.fresh;
  }

  /** Marks the registry as changed: the next rebalance lists it afresh (a new session's). */
  markChanged(): void {
    this.changed = true;
  }

  /** When the registry was last listed (wall clock: pacing, not engine time). */
  private listedAt = Number.NEGATIVE_INFINITY;
  /** The least time from the last listing to the next (see REGISTRY_PACE_MAX_MS). */
  private pace = REGISTRY_PACE_MS;
  /** Wakes the worker when a paced re-read is due. */
  private paceTimer: ReturnType<typeof setTimeout> | null = null;
  /** The registration the registry view was last read for. */
  private listedFor: string | null = null;
  /** {@link peers} as of the last registry read. */
  private peerCache: readonly PeerPlace[] | null = null;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly engine: Engine,
    private readonly identity: WorkerIdentity,
    /** Told when the registry changes (an idle worker wakes up to rebalance). */
    private readonly onChange: () => void,
    private readonly warn: (fields: object, msg: string) => void,
  ) {
    // Every worker reads this registration: its types are bounded before it is written.
    const problem = workerTypesProblem(identity.types);
    if (problem !== null)
      throw new ZoottError('INVALID_CONFIG', `handlers: ${problem}`, { field: 'handlers' });
  }

  /** Whether this worker keeps a steal watch on `bucket` (one it does not own). */
  watches(bucket: number): boolean {
    return this.watching === null || this.watching.has(bucket);
  }

  /** The registry node's data, owning `buckets`. */
  workerInfo(buckets: number[]): WorkerInfo {
    const me = this.identity;
    const info: WorkerInfo = {
      id: me.id,
      types: me.types,
      buckets,
      started: me.startedAt,
      version: 1,
    };
    if (me.host !== undefined) info.host = me.host;
    if (me.pid !== undefined) info.pid = me.pid;
    if (me.server !== undefined) info.server = me.server;
    if (me.files === true) info.files = true;
    if (me.datasets !== undefined && me.datasets.length > 0) info.datasets = me.datasets;
    return info;
  }

  /** Whether the current session has no registry node yet. */
  needsRegistration(): boolean {
    return this.registeredSession !== this.coordinator.sessionId;
  }

  /** The session is gone, and its ephemeral registry node with it. */
  sessionLost(): void {
    this.registryPath = null;
    this.registeredSession = null;
  }

  /** Whether `session` is another session than the registered one. */
  isNewSession(session: string | null): boolean {
    return session !== this.registeredSession;
  }

  /**
   * What the other live workers advertise (for the locality wait), `undefined` before the
   * first read of the registry. Cached until the registry changes: claims ask per candidate.
   */
  peers(): readonly PeerPlace[] | undefined {
    if (!this.registry || !this.registryPath || this.registry.names.length === 0) return undefined;
    // A change seen and not read yet (a paced re-read waits): a worker named by a hint may have
    // just joined, so the view does not say who is alive; unknown presumes the named one is.
    if (this.dirty || this.listing !== null || this.reads !== null) return undefined;
    if (this.peerCache === null) {
      const self = this.registryPath.slice(this.registryPath.lastIndexOf('/') + 1);
      this.peerCache = this.registry.peers(self);
    }
    return this.peerCache;
  }

  /**
   * Live workers that serve `type`, this one included (counted even before the registry
   * shows it, so a new worker never takes the whole of a rate limit).
   */
  serving(type: string): number {
    const listed = this.registry?.serving(type) ?? 0;
    const meListed =
      this.registryPath !== null &&
      this.registry?.names.includes(
        this.registryPath.slice(this.registryPath.lastIndexOf('/') + 1),
      );
    return listed + (meListed || !this.identity.types.includes(type) ? 0 : 1);
  }

  /**
   * The live registry names as the last rebalance read them, `null` until one read them for
   * the current registration: the world's reaper elects itself from this view instead of
   * reading the registry again.
   */
  liveNames(): readonly string[] | null {
    if (!this.registry || !this.registryPath || this.listedFor !== this.registryPath) return null;
    return this.registry.names;
  }

  /**
   * The world's reaper for this worker: it elects itself from this membership's view of the
   * registry ({@link liveNames}), so the registry is read by one component only.
   */
  reaper(ctx: EngineContext, options: ReaperOptions = {}): Reaper {
    return new Reaper(
      ctx,
      () => this.registryPath,
      options,
      () => this.liveNames(),
    );
  }

  /** Creates this session's registry node (owning no bucket until the first rebalance). */
  async register(): Promise<void> {
    const ctx = await this.engine.context();
    const session = this.coordinator.sessionId;
    if (session === null) return;
    this.registryPath = await this.coordinator.create(
      `${ctx.layout.registry}/worker-`,
      encodeJson(this.workerInfo([])),
      { ephemeral: true, sequential: true },
    );
    this.registeredSession = session;
    this.readDone = false;
    this.registry = new RegistryView(this.coordinator, ctx.layout.registry, (path) =>
      this.warn(
        { path },
        'ignoring a persistent node in the worker registry: not a live worker (zoott doctor --repair moves it away)',
      ),
    );
    this.markChanged();
  }

  /**
   * Re-reads the registry and recomputes the owned buckets; when they changed, tells
   * `onOwned` (before the registry node is rewritten, so claiming follows at once) and
   * returns the new set, else `null`. Ownership needs the registry's names alone: it is
   * taken from the listing, and the new registrations are read behind it (N reads for each
   * worker of a fleet joining at once: at 256 workers, seconds of a loaded server, which held
   * every worker's share and its next listing back); once read, the next call takes the
   * shares again with what they say (a persistent node among them is no registration; the
   * steal watchers need the types). A registry that changed meanwhile is listed again in the
   * same call when the pace allows.
   */
  async rebalance(onOwned: (owned: number[]) => void): Promise<number[] | null> {
    const ctx = await this.engine.context();
    const before = this.owned;
    for (;;) {
      if (this.readFailure !== null) {
        const failure = this.readFailure;
        this.readFailure = null;
        this.changed = true;
        throw failure;
      }
      const registry = this.registry;
      const path = this.registryPath;
      if (!registry || !path) return null;
      if (this.readDone) {
        this.readDone = false;
        if (this.listedFor === path) this.assign(path, registry, ctx.layout.buckets, onOwned);
      }
      const due = this.changed || this.fresh;
      if (due && !(await this.list(registry, path, ctx.layout.buckets, onOwned))) break;
      const unread = this.reads === null && this.listedFor === path ? registry.unread() : 0;
      // A few new registrations (one read request) are read before the loop claims again, as
      // before: a new peer's locality adverts are known at once. A wave is read behind.
      if (unread > 0 && unread <= READ_AT_ONCE) await this.readRegistrations(registry, path);
      else if (unread > 0) void this.readRegistrations(registry, path);
      if (!this.changed && !this.readDone && !this.fresh) break;
    }
    const path = this.registryPath;
    if (this.owned === before || path === null) return null;
    await this.coordinator
      .set(path, encodeJson(this.workerInfo(this.owned)))
      .catch(() => undefined);
    return this.owned;
  }

  /**
   * Lists the registry (or waits for the listing already out) and takes the shares from its
   * names; `false` when it did not list (paced) or the session went while the listing was out.
   */
  private async list(
    registry: RegistryView,
    path: string,
    buckets: number,
    onOwned: (owned: number[]) => void,
  ): Promise<boolean> {
    if (this.listing !== null) await this.listing;
    else if (!this.paced(path)) await this.fetch(registry, path);
    if (!this.fresh || this.listedFor !== path || this.registry !== registry) return false;
    this.fresh = false;
    this.assign(path, registry, buckets, onOwned);
    return true;
  }

  /**
   * Whether a listing now would come too soon after the last: then a timer brings the next
   * one when the pace allows. A change soon after the last read waits out the rest of the
   * pace (the worker goes on claiming meanwhile), so a fleet joining at once costs each worker
   * a few listings, not one per registration. A lone leave or join is read at once.
   */
  private paced(path: string): boolean {
    const wait = this.listedAt + this.pace - Date.now();
    if (this.listedFor !== path || wait <= 0) return false;
    if (this.paceTimer === null) {
      this.paceTimer = setTimeout(() => {
        this.paceTimer = null;
        this.listAhead();
        this.onChange();
      }, wait);
      this.paceTimer.unref?.();
    }
    return true;
  }

  /**
   * Sends the listing a change calls for as soon as the pace allows, without waiting for the
   * worker's loop, which may be in a claim or steal pass for a while (seconds of a loaded
   * server at 256 workers): the loop then takes the shares from the listing already answered.
   */
  private listAhead(): void {
    const registry = this.registry;
    const path = this.registryPath;
    if (!registry || !path || this.listing !== null || !this.changed || this.paced(path)) return;
    this.listing = this.fetch(registry, path)
      .catch((err: unknown) => {
        if (this.registry === registry) this.readFailure = err;
        this.changed = true;
      })
      .finally(() => {
        this.listing = null;
        // A change while it was out (the timer found it out and left it): the next one now.
        this.listAhead();
        this.onChange();
      });
  }

  /** One listing of the registry, arming its watch; {@link fresh} once answered. */
  private async fetch(registry: RegistryView, path: string): Promise<void> {
    const now = Date.now();
    // Changes still coming since the last read: the next read waits twice as long.
    this.pace =
      now - this.listedAt > REGISTRY_PACE_MAX_MS
        ? REGISTRY_PACE_MS
        : Math.min(REGISTRY_PACE_MAX_MS, this.pace * 2);
    this.listedAt = now;
    this.changed = false;
    await registry.list(() => {
      this.changed = true;
      this.onChange();
      this.listAhead();
    });
    this.peerCache = null;
    // The session may have been lost while the listing was out (and a new one registered):
    // that listing no longer says what this registration owns. The next round reads again.
    if (this.registryPath !== path || this.registry !== registry) {
      this.changed = true;
      return;
    }
    this.listedFor = path;
    this.fresh = true;
  }

  /**
   * Reads the listing's new registrations in the background; when done, the worker is woken
   * to take the shares again (a failure is thrown by the next {@link rebalance}).
   */
  private readRegistrations(registry: RegistryView, path: string): Promise<void> {
    this.reads = registry
      .readNew()
      .then(
        () => undefined,
        (err: unknown) => {
          if (this.registry === registry) this.readFailure = err;
        },
      )
      .finally(() => {
        this.reads = null;
        if (this.registryPath !== path || this.registry !== registry) return;
        this.peerCache = null;
        this.readDone = true;
        this.onChange();
      });
    return this.reads;
  }

  /**
   * Computes the owned and steal-watched buckets of the registration `path` among `names`;
   * tells `onOwned` when the owned ones changed.
   */
  private assign(
    path: string,
    registry: RegistryView,
    buckets: number,
    onOwned: (owned: number[]) => void,
  ): void {
    const me = path.slice(path.lastIndexOf('/') + 1);
    const names = registry.names;
    const live = names.includes(me) ? names : [...names, me];
    const owners = bucketOwners(live, buckets);
    const owned: number[] = [];
    for (let b = 0; b < owners.length; b++) if (owners[b] === me) owned.push(b);
    // A registration not read yet is presumed to serve what this worker serves: counted as
    // serving nothing, this worker would be the only one known to serve its types, and would
    // watch every bucket (a first look at each: 60 packets per worker at 256 workers).
    const mine = this.identity.types;
    const watchers = stealWatchers(live, owners, (member) =>
      member === me || !registry.isRead(member) ? mine : registry.typesOf(member),
    );
    const watching = new Set<number>();
    for (let b = 0; b < watchers.length; b++) if (watchers[b]!.includes(me)) watching.add(b);
    this.watching = watching;
    if (owned.join() === this.owned.join()) return;
    this.owned = owned;
    onOwned(owned);
  }

  /** Removes the registry node (on stop). */
  async unregister(): Promise<void> {
    if (this.paceTimer !== null) clearTimeout(this.paceTimer);
    this.paceTimer = null;
    if (!this.registryPath) return;
    await this.coordinator.delete(this.registryPath).catch(() => undefined);
    this.registryPath = null;
  }
}
