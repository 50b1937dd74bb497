import type { Coordinator } from '../contract/coordinator.js';
import { decodeJson } from '../contract/paths.js';
import type { PeerPlace } from '../tree/ordering.js';
import { codeOf } from './errors.js';
import { fnv1a32 } from './layout.js';

/** What a worker publishes in its registry node (qdo's "which queues I hold"). */
export interface WorkerInfo {
  id: string;
  host?: string;
  pid?: number;
  server?: string;
  types: string[];
  /** It serves `filename` hints from a local data directory (which files is not listed). */
  files?: boolean;
  /** Datasets it caches, for `dataset` hints. */
  datasets?: string[];
  buckets: number[];
  started: number;
  version: number;
}

/**
 * Most task types one registration advertises, and the longest type (the default task
 * limit's): every worker reads every registration, and each type a worker serves alone is
 * weighed for every bucket at every registry change (`stealWatchers`), so a registration with
 * thousands would cost the whole fleet.
 */
export const MAX_WORKER_TYPES = 1024;
export const MAX_WORKER_TYPE_LENGTH = 200;

/**
 * Why `types` cannot be a registration's task types (a list of at most
 * {@link MAX_WORKER_TYPES} non-empty strings of at most {@link MAX_WORKER_TYPE_LENGTH}
 * characters), or `null` when it can.
 */
export function workerTypesProblem(types: unknown): string | null {
  if (!Array.isArray(types)) return 'must be a list of task types';
  if (types.length > MAX_WORKER_TYPES)
    return `${types.length} task types, at most ${MAX_WORKER_TYPES} (each worker's types are read by every other worker)`;
  for (const type of types)
    if (typeof type !== 'string' || type.length === 0 || type.length > MAX_WORKER_TYPE_LENGTH)
      return `${JSON.stringify(typeof type === 'string' ? type.slice(0, 40) : type)}${typeof type === 'string' && type.length > 40 ? '...' : ''} is no task type (1 to ${MAX_WORKER_TYPE_LENGTH} characters)`;
  return null;
}

/** Registrations read per request (the adapter's multiRead batch). */
const READ_BATCH = 32;

/** murmur3's 32-bit finalizer: spreads every input bit over the whole word. */
function mix32(hash: number): number {
  let mixed = hash ^ (hash >>> 16);
  mixed = Math.imul(mixed, 0x85ebca6b);
  mixed ^= mixed >>> 13;
  mixed = Math.imul(mixed, 0xc2b2ae35);
  mixed ^= mixed >>> 16;
  return mixed >>> 0;
}

/**
 * The owner of every bucket among the live registry node names, by rendezvous hashing with
 * bounded load: a bucket goes to the name that scores highest for it among the names still
 * under their share, where the shares are `floor(buckets / n)` and, for `buckets % n` of the
 * names, one more. Every worker computes the same answer from the same list, a join or leave
 * moves about `buckets / n` buckets (on average within twice that), and loads never differ by
 * more than one bucket.
 *
 * Why not plain rendezvous over `fnv1a32(name + '/' + bucket)`: registry names differ only in
 * their sequence digits, FNV-1a leaves such near-identical strings correlated, and four workers
 * measured 7, 1, 31 and 25 of 64 buckets. A worker with no bucket only works by stealing.
 */
export function bucketOwners(live: readonly string[], buckets: number): string[] {
  const names = [...new Set(live)].sort();
  const count = names.length;
  if (count === 0) return [];
  const nameHash = names.map((name) => fnv1a32(name));
  const share = Math.floor(buckets / count);
  const extra = buckets % count;
  const load = new Array<number>(count).fill(0);
  let atExtra = 0;
  const owners: string[] = [];
  for (let b = 0; b < buckets; b++) {
    const salt = Math.imul(b + 1, 0x9e3779b1);
    let best = -1;
    let bestScore = -1;
    for (let i = 0; i < count; i++) {
      const held = load[i]!;
      if (held > share || (held === share && atExtra >= extra)) continue;
      const score = mix32(nameHash[i]! ^ salt);
      if (score > bestScore) {
        best = i;
        bestScore = score;
      }
    }
    if (load[best] === share) atExtra++;
    load[best]!++;
    owners.push(names[best]!);
  }
  return owners;
}

/** The buckets `bucketOwners` gives to `me` (counted among `live` even if not listed yet). */
export function ownedBuckets(me: string, live: readonly string[], buckets: number): number[] {
  const owners = bucketOwners(live.includes(me) ? live : [...live, me], buckets);
  const out: number[] = [];
  for (let b = 0; b < owners.length; b++) if (owners[b] === me) out.push(b);
  return out;
}

/**
 * Idle workers that keep a steal watch on each bucket (a children watch left by a steal
 * pass): more would each list the bucket once per change (a herd), fewer would leave a
 * slow or dead owner's tasks to its session's expiry when one of them is busy.
 */
export const STEAL_WATCHERS = 2;

/**
 * For every bucket, the live workers other than its owner that keep a steal watch on it:
 * the {@link STEAL_WATCHERS} names scoring highest for the bucket (rendezvous hashing, so a
 * join or leave moves few of them), then, walking on in score order, each name that serves a
 * task type the owner and those chosen do not (`typesOf`; `null` when unknown, serving none
 * for this count): a task of a type only some workers run is still seen by one of them. Every
 * worker computes the same answer from the same registry, with no request.
 */
export function stealWatchers(
  live: readonly string[],
  owners: readonly string[],
  typesOf: (name: string) => readonly string[] | null,
  perBucket = STEAL_WATCHERS,
): string[][] {
  const names = [...new Set(live)].sort();
  const fleetSize = names.length;
  const nameHash = names.map((name) => fnv1a32(name));
  const types = names.map((name) => typesOf(name) ?? []);
  const everyType = new Set<string>();
  for (const served of types) for (const type of served) everyType.add(type);
  const index = new Map(names.map((name, i) => [name, i]));
  const score = new Uint32Array(fleetSize);
  /** 1 for each worker that owns a bucket or watches one. */
  const involved = new Uint8Array(fleetSize);
  const out: string[][] = [];
  // Each worker runs this at every registry change for every bucket: a selection of the top
  // few (linear in the fleet), and a sort only when some task type is not covered by them.
  for (let b = 0; b < owners.length; b++) {
    const owner = owners[b] === undefined ? -1 : (index.get(owners[b]!) ?? -1);
    // Another salt than ownership's: the watchers of a bucket are not its runners-up there.
    const salt = Math.imul(b + 1, 0x7feb352d);
    for (let i = 0; i < fleetSize; i++) score[i] = mix32(nameHash[i]! ^ salt);
    const chosen: number[] = [];
    for (let k = 0; k < perBucket; k++) {
      let best = -1;
      for (let i = 0; i < fleetSize; i++)
        if (i !== owner && !chosen.includes(i) && (best < 0 || score[i]! > score[best]!)) best = i;
      if (best < 0) break;
      chosen.push(best);
    }
    const covered = new Set(owner < 0 ? [] : types[owner]);
    for (const member of chosen) for (const type of types[member]!) covered.add(type);
    if (covered.size < everyType.size) {
      const rest: number[] = [];
      for (let i = 0; i < fleetSize; i++) if (i !== owner && !chosen.includes(i)) rest.push(i);
      rest.sort((x, y) => score[y]! - score[x]! || x - y);
      for (const member of rest) {
        if (covered.size >= everyType.size) break;
        if (!types[member]!.some((type) => !covered.has(type))) continue;
        chosen.push(member);
        for (const type of types[member]!) covered.add(type);
      }
    }
    out.push(chosen.map((member) => names[member]!));
    for (const member of chosen) involved[member] = 1;
    if (owner >= 0) involved[owner] = 1;
  }
  // A worker that owns no bucket and watches none would never look anywhere again once idle:
  // with more workers than buckets times three, a task whose watchers are all busy would wait
  // for its owner while such a worker sat idle. Each watches the bucket it scores highest for,
  // so the extra watchers per bucket stay about (fleet - 3 x buckets) / buckets.
  for (let member = 0; member < fleetSize && owners.length > 0; member++) {
    if (involved[member]) continue;
    let best = 0;
    let bestScore = -1;
    for (let b = 0; b < owners.length; b++) {
      const bucketScore = mix32(nameHash[member]! ^ Math.imul(b + 1, 0x7feb352d));
      if (bucketScore > bestScore) {
        best = b;
        bestScore = bucketScore;
      }
    }
    out[best]!.push(names[member]!);
  }
  return out;
}

/**
 * The registry children with a watch, plus each node's info (cached by node name). Only
 * ephemeral nodes are registrations: a worker's node lives exactly as long as its session.
 * A persistent node there (written by hand, or recreated by an import of an export taken
 * while workers ran) belongs to no live worker; counted, it would own buckets that nobody
 * serves. Such nodes are left out and reported once each.
 */
export class RegistryView {
  private readonly infos = new Map<string, WorkerInfo | null>();
  /** Persistent nodes seen in the registry (ignored), so each is reported once. */
  private readonly ghosts = new Set<string>();
  names: string[] = [];

  constructor(
    private readonly coordinator: Coordinator,
    private readonly path: string,
    private readonly onGhost: (path: string) => void = () => {},
  ) {}

  /** Re-lists the registry, arming a watch that calls `onChange` once; the live names. */
  async refresh(onChange: () => void): Promise<string[]> {
    await this.list(onChange);
    await this.readNew();
    return this.names;
  }

  /**
   * Lists the registry, arming a watch that calls `onChange` once. {@link names} is then the
   * listed names but the persistent ones already seen, the ones not read yet included (a
   * registration is what a listing shows: bucket ownership needs the names alone); whether
   * each new one is live (ephemeral) and what it serves is known after {@link readNew}.
   */
  async list(onChange: () => void): Promise<string[]> {
    const listed = (await this.coordinator.children(this.path, { watch: onChange })).sort();
    const present = new Set(listed);
    for (const name of this.infos.keys()) if (!present.has(name)) this.infos.delete(name);
    for (const name of this.ghosts) if (!present.has(name)) this.ghosts.delete(name);
    this.names = listed.filter((n) => !this.ghosts.has(n));
    return this.names;
  }

  /** How many of the listed names are not read yet. */
  unread(): number {
    let count = 0;
    for (const name of this.names) if (!this.infos.has(name)) count++;
    return count;
  }

  /**
   * Reads each listed registration not read yet (once per registration); a persistent node
   * (no registration) or one deleted meanwhile leaves {@link names}. Whether any was read.
   */
  async readNew(): Promise<boolean> {
    const gone = new Set<string>();
    const read = async (name: string): Promise<void> => {
      const path = `${this.path}/${name}`;
      try {
        const got = await this.coordinator.get(path);
        if (got.stat.ephemeralOwner === null) {
          this.ghosts.add(name);
          gone.add(name);
          this.onGhost(path);
          return;
        }
        let info: WorkerInfo | null = null;
        try {
          info = decodeJson<WorkerInfo>(got.data, path);
        } catch {
          // A live registration with unreadable info still counts as a worker.
        }
        // Types past the bound (a hostile or broken registration) are not taken: the worker
        // counts as one whose types are unknown (it may serve any; it covers none for the
        // steal watchers), so it costs the others no more than any registration.
        if (info !== null && typeof info === 'object' && workerTypesProblem(info.types) !== null) {
          const { types: _unread, ...rest } = info;
          info = rest as WorkerInfo;
        }
        this.infos.set(name, info);
      } catch (err) {
        if (codeOf(err) !== 'NO_NODE') throw err;
        gone.add(name);
      }
    };
    const toRead = this.names.filter((n) => !this.infos.has(n));
    // The ZooKeeper adapter sends the plain reads of one turn as one multiRead, once the
    // capability probe it sends with a session's first batch has answered; that first batch
    // goes out one read per request. A worker joining a fleet of N reads N registrations at
    // its first listing: two first (they carry the probe), then the rest, 32 to a request,
    // one request at a time: a session's requests are answered in order, so a listing or a
    // claim sent meanwhile waits behind one batch, not all N reads (at 256 workers joining at
    // once, 65,000 reads held every worker's next listing back by seconds).
    const first = toRead.length > 2 ? toRead.slice(0, 2) : toRead;
    await Promise.all(first.map(read));
    for (let from = first.length; from < toRead.length; from += READ_BATCH)
      await Promise.all(toRead.slice(from, from + READ_BATCH).map(read));
    // A listing taken meanwhile replaced the names: only what was found gone leaves them (a
    // deleted registration also fires the listing's watch, so the next listing agrees).
    if (gone.size > 0) this.names = this.names.filter((n) => !gone.has(n));
    return toRead.length > 0;
  }

  /** Whether the registration `name` was read (its info, readable or not, is known). */
  isRead(name: string): boolean {
    return this.infos.has(name);
  }

  /** The task types the live worker `name` advertises; `null` when unknown. */
  typesOf(name: string): readonly string[] | null {
    const types = this.infos.get(name)?.types;
    return Array.isArray(types) ? types : null;
  }

  /** Live workers that serve `type` (one whose info cannot be read counts: it may). */
  serving(type: string): number {
    let count = 0;
    for (const info of this.infos.values())
      if (!info || !Array.isArray(info.types) || info.types.includes(type)) count++;
    return count;
  }

  /**
   * What the live workers other than the one registered as `self` (a node name) advertise
   * for locality; nodes with unreadable info advertise nothing.
   */
  peers(self: string): PeerPlace[] {
    const out: PeerPlace[] = [];
    for (const [name, info] of this.infos) {
      if (name === self || !info) continue;
      const peer: PeerPlace = { types: Array.isArray(info.types) ? info.types : [] };
      if (typeof info.server === 'string') peer.server = info.server;
      if (info.files === true) peer.files = true;
      if (Array.isArray(info.datasets)) peer.datasets = info.datasets;
      out.push(peer);
    }
    return out;
  }
}
