import { ZoottError } from './errors.js';

function invalidPath(path: string, op: string | undefined, why: string): ZoottError {
  return new ZoottError('INVALID_PATH', `${JSON.stringify(path)}: ${why}`, { path, op });
}

/** A UTF-16 code unit ZooKeeper's PathUtils rejects (control, surrogate, private use, specials). */
function rejectedUnit(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0xd800 && code <= 0xf8ff) ||
    code >= 0xfff0
  );
}

/**
 * ZooKeeper path rules: absolute, '/'-separated, no empty or relative segment, no trailing
 * slash (except the root), no NUL or control characters that the server rejects.
 *
 * Every request checks its paths, so this is one pass over the characters that allocates
 * nothing unless the path is bad; the first fault of a bad path is reported in the order the
 * rules read above (a segment's fault before a character's).
 */
export function validatePath(path: string, op?: string): void {
  if (typeof path !== 'string' || path.length === 0)
    throw invalidPath(path, op, 'a path must be a non-empty string');
  if (path.charCodeAt(0) !== 0x2f) throw invalidPath(path, op, "a path must start with '/'");
  const length = path.length;
  if (length === 1) return;
  if (path.charCodeAt(length - 1) === 0x2f)
    throw invalidPath(path, op, "a path must not end with '/'");
  let rejected = false;
  let start = 1;
  for (let i = 1; i <= length; i++) {
    const code = i < length ? path.charCodeAt(i) : 0x2f;
    if (code !== 0x2f) {
      if (!rejected && rejectedUnit(code)) rejected = true;
      continue;
    }
    const len = i - start;
    if (len === 0) throw invalidPath(path, op, 'empty segment');
    if (
      path.charCodeAt(start) === 0x2e &&
      (len === 1 || (len === 2 && path.charCodeAt(start + 1) === 0x2e))
    )
      throw invalidPath(path, op, 'relative segments are not allowed');
    start = i + 1;
  }
  if (rejected) throw invalidPath(path, op, 'contains a character ZooKeeper rejects');
}

export function joinPath(...parts: string[]): string {
  const joined = parts
    .flatMap((p) => p.split('/'))
    .filter((s) => s !== '')
    .join('/');
  return `/${joined}`;
}

export function parentPath(path: string): string {
  const lastSlash = path.lastIndexOf('/');
  return lastSlash <= 0 ? '/' : path.slice(0, lastSlash);
}

/** Whether `path` is `root` or lies under it (what a tree watch on `root` covers). */
export function isAtOrUnder(path: string, root: string): boolean {
  return root === '/' || path === root || path.startsWith(`${root}/`);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** UTF-8 text to and from the bytes a Coordinator stores (`zk.create(path, utf8.encode(s))`). */
export const utf8 = {
  encode: (s: string): Uint8Array => encoder.encode(s),
  decode: (b: Uint8Array): string => decoder.decode(b),
};

/**
 * Node data for a value, as JSON in UTF-8. Small values are encoded into a shared slab and
 * handed out as views of it (`byteOffset` and `byteLength` say where), as Node's Buffer pool
 * does: `TextEncoder.encode` gives each result an array buffer of its own, and a busy worker
 * encodes three records per task (the claimed entry, the claim, the completed record).
 */
export function encodeJson(value: unknown): Uint8Array {
  const text = JSON.stringify(value);
  // At most 3 bytes per UTF-16 unit; a big value gets a buffer of its own.
  const most = 3 * text.length;
  if (most > SLAB_BYTES / 8) return encoder.encode(text);
  if (slabUsed + most > SLAB_BYTES) {
    slab = new Uint8Array(SLAB_BYTES);
    slabUsed = 0;
  }
  const start = slabUsed;
  const { written } = encoder.encodeInto(text, slab.subarray(start));
  // Aligned like the pool's slices, so the next value starts on a fresh word.
  slabUsed = (start + written + 7) & ~7;
  return slab.subarray(start, start + written);
}

/** Size of one slab of {@link encodeJson}: a slab lives while any value in it does. */
const SLAB_BYTES = 16 * 1024;
let slab = new Uint8Array(SLAB_BYTES);
let slabUsed = 0;

/** Parses node data as JSON; empty data is `null`. Throws BAD_ARGUMENTS naming the path. */
export function decodeJson<T = unknown>(data: Uint8Array, path?: string): T {
  if (data.length === 0) return null as T;
  const text = decoder.decode(data);
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new ZoottError('BAD_ARGUMENTS', `node data is not JSON: ${(err as Error).message}`, {
      path,
      cause: err,
    });
  }
}
