import { ZoottError } from '../contract/errors.js';
import { AREA_NAMES, type AreaName, WORLD_PREFIX } from '../tree/areas.js';
import { KEY_SEPARATOR, type TaskKey, worldRoot } from '../tree/keys.js';

/** Default number of buckets per area (fixed per world by `init`). */
export const DEFAULT_BUCKETS = 64;
/** Largest bucket count a world may use. */
export const MAX_BUCKETS = 4096;

/** Checks an engine's `buckets` option (`undefined`: the world's own, or the default). */
export function validateBuckets(buckets: number | undefined): void {
  if (buckets !== undefined && (!Number.isInteger(buckets) || buckets < 1 || buckets > MAX_BUCKETS))
    throw new ZoottError(
      'INVALID_CONFIG',
      `buckets ${String(buckets)}: must be an integer in [1, ${MAX_BUCKETS}]`,
      {
        field: 'buckets',
      },
    );
}
/** Priorities are integers in [-MAX_PRIORITY, MAX_PRIORITY]; higher runs first. */
export const MAX_PRIORITY = 999_999;
const PRIORITY_OFFSET = 1_000_000;

/**
 * The bucketed areas of a world, by what they hold; each is `/zoott_<letter>/<world>/<bucket>`.
 * The letters come from the one list of areas ({@link AREA_NAMES}); code names an area by its
 * role.
 */
export const AREA = {
  pending: AREA_NAMES.pending,
  working: AREA_NAMES.working,
  completed: AREA_NAMES.completed,
  failed: AREA_NAMES.failed,
} as const;
export type Area = (typeof AREA)[keyof typeof AREA];
/** The areas that hold one record per task key (the pending area holds entries instead). */
export type RecordArea = Exclude<Area, typeof AREA.pending>;
/** Every bucketed area, in the order `init` creates them. */
export const AREAS: readonly Area[] = [AREA.pending, AREA.working, AREA.completed, AREA.failed];

/** The world's worker registry, `/zoott_workers/<world>`, sits beside the areas. */
export const REGISTRY_AREA = AREA_NAMES.registry;

/** An area's node, shared by every world of the namespace: `/zoott_<area>`. */
export function areaParent(area: AreaName): string {
  return topNodePath(area);
}

/**
 * The namespace's top node for `name` (a world's tree root, or an area's node), without
 * checking the name: for names read from the server, which need not be zoott's.
 */
export function topNodePath(name: string): string {
  return `${WORLD_PREFIX}${name}`;
}

/** The `<name>` of a child `zoott_<name>` of the namespace root; `null` for a node not zoott's. */
export function topNodeName(child: string): string | null {
  const prefix = WORLD_PREFIX.slice(1);
  return child.startsWith(prefix) && child.length > prefix.length
    ? child.slice(prefix.length)
    : null;
}

/**
 * Where zoott keeps only ephemeral nodes, by the name of the namespace's child that holds
 * them and how many levels below it they sit: claims `zoott_w/<world>/<bucket>/<key>` and
 * registrations `zoott_workers/<world>/<worker>`. `zoott import` leaves them out: imported,
 * they would be claims and workers that no session owns.
 */
export const EPHEMERAL_LEVELS: Readonly<Record<string, number>> = Object.freeze({
  [areaParent(AREA_NAMES.working).slice(1)]: 3,
  [areaParent(AREA_NAMES.registry).slice(1)]: 2,
});

/**
 * Results the AMQP bridge could not publish (an exchange refused or missing, no queue bound),
 * `/zoott_~parked/<world>/<result>`, sit in an area of their own: an operator lists, retries
 * or drops them (`zoott parked`), and `zoott doctor` reports them.
 */
export const PARKED_AREA = AREA_NAMES.parked;

/** `/zoott_~parked/<world>`: where a world's parked results are. */
export function parkedRoot(world: string): string {
  return `${areaParent(PARKED_AREA)}/${world}`;
}

/**
 * Kinds of pending entries, the first letter of an entry's name (stored, so fixed): a dead
 * entry is a task that failed for good and still blocks its descendants.
 */
export const ENTRY_KIND = { queued: 'q', retry: 'r', dead: 'x' } as const;
export type EntryKind = (typeof ENTRY_KIND)[keyof typeof ENTRY_KIND];

/** 32-bit FNV-1a over UTF-16 code units: stable forever, because bucket numbers are stored. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** Bucket node name `0000`..`4095`. */
export function bucketName(index: number): string {
  return String(index).padStart(4, '0');
}

/** Every path of one world, computed once. */
export class WorldLayout {
  readonly root: string;
  readonly registry: string;
  /** Results the AMQP bridge parked (see {@link PARKED_AREA}). */
  readonly parked: string;

  constructor(
    readonly world: string,
    readonly buckets: number,
  ) {
    this.root = worldRoot(world);
    this.registry = this.areaRoot(REGISTRY_AREA);
    this.parked = parkedRoot(world);
  }

  /** `/zoott_<area>/<world>`: the world's node in an area (any area of {@link AREA_NAMES}). */
  areaRoot(area: AreaName): string {
    return `${areaParent(area)}/${this.world}`;
  }

  bucketOf(key: TaskKey): number {
    return fnv1a32(key[0]!) % this.buckets;
  }

  bucketPath(area: Area, bucket: number): string {
    return `${this.areaRoot(area)}/${bucketName(bucket)}`;
  }

  treePath(key: TaskKey): string {
    return key.length === 0 ? this.root : `${this.root}/${key.join('/')}`;
  }

  /** Path of a key's record in the working, completed or failed area. */
  recordPath(area: RecordArea, key: TaskKey): string {
    return `${this.bucketPath(area, this.bucketOf(key))}/${key.join(KEY_SEPARATOR)}`;
  }

  entryPath(key: TaskKey, entryName: string): string {
    return `${this.bucketPath(AREA.pending, this.bucketOf(key))}/${entryName}`;
  }
}

/** A pending entry name taken apart. `seq` is the server's sequence suffix. */
export interface EntryName {
  name: string;
  kind: EntryKind;
  priority: number;
  encodedKey: string;
  seq: number;
}

export function validatePriority(priority: unknown, field = 'priority'): number {
  if (
    typeof priority !== 'number' ||
    !Number.isInteger(priority) ||
    Math.abs(priority) > MAX_PRIORITY
  ) {
    throw new ZoottError(
      'INVALID_TASK',
      `${field} ${String(priority)}: must be an integer in [-${MAX_PRIORITY}, ${MAX_PRIORITY}]`,
      { field },
    );
  }
  return priority;
}

/** The prefix of a new entry; the server appends the 10-digit sequence. */
export function entryPrefix(kind: EntryKind, priority: number, encodedKey: string): string {
  return `${kind}${String(priority + PRIORITY_OFFSET).padStart(7, '0')}-${encodedKey}-`;
}

const ENTRY_RE = /^([qrx])(\d{7})-(.+)-(\d{10})$/;

// Claim order of one bucket's entries is claim order's own (tree/claim-order.ts).
export { byClaimOrder } from '../tree/claim-order.js';

/** Parses an entry name; `null` for anything that is not one (foreign nodes are ignored). */
export function parseEntryName(name: string): EntryName | null {
  const match = ENTRY_RE.exec(name);
  if (!match) return null;
  return {
    name,
    kind: match[1] as EntryKind,
    priority: Number(match[2]) - PRIORITY_OFFSET,
    encodedKey: match[3]!,
    seq: Number(match[4]),
  };
}
