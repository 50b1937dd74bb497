import { ZoottError } from '../contract/errors.js';
import { KEY_SEPARATOR, type TaskKey, worldRoot } from '../tree/keys.js';

/** Default number of buckets per area (fixed per world by `init`). */
export const DEFAULT_BUCKETS = 64;
/** Largest bucket count a world may use. */
export const MAX_BUCKETS = 4096;
/** Priorities are integers in [-MAX_PRIORITY, MAX_PRIORITY]; higher runs first. */
export const MAX_PRIORITY = 999_999;
const PRIORITY_OFFSET = 1_000_000;

/** The areas of a world; each is `/zoott_<area>/<world>/<bucket>`. */
export type Area = 'p' | 'w' | 'c' | 'f';

/** Kinds of pending entries: q = queued, r = retry, x = dead (failed, still blocks descendants). */
export type EntryKind = 'q' | 'r' | 'x';

/** 32-bit FNV-1a over UTF-16 code units: stable forever, because bucket numbers are stored. */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Bucket node name `0000`..`4095`. */
export function bucketName(index: number): string {
  return String(index).padStart(4, '0');
}

/** Every path of one world, computed once. */
export class WorldLayout {
  readonly root: string;
  readonly registry: string;

  constructor(
    readonly world: string,
    readonly buckets: number,
  ) {
    this.root = worldRoot(world);
    this.registry = `/zoott_workers/${world}`;
  }

  /** `/zoott_<area>/<world>` */
  areaRoot(area: Area): string {
    return `/zoott_${area}/${this.world}`;
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
  recordPath(area: 'w' | 'c' | 'f', key: TaskKey): string {
    return `${this.bucketPath(area, this.bucketOf(key))}/${key.join(KEY_SEPARATOR)}`;
  }

  entryPath(key: TaskKey, entryName: string): string {
    return `${this.bucketPath('p', this.bucketOf(key))}/${entryName}`;
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

/** Parses an entry name; `null` for anything that is not one (foreign nodes are ignored). */
export function parseEntryName(name: string): EntryName | null {
  const m = ENTRY_RE.exec(name);
  if (!m) return null;
  return {
    name,
    kind: m[1] as EntryKind,
    priority: Number(m[2]) - PRIORITY_OFFSET,
    encodedKey: m[3]!,
    seq: Number(m[4]),
  };
}
