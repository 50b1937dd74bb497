import { ZoottError } from './errors.js';

/**
 * ZooKeeper path rules: absolute, '/'-separated, no empty or relative segment, no trailing
 * slash (except the root), no NUL or control characters that the server rejects.
 */
export function validatePath(path: string, op?: string): void {
  const bad = (why: string) =>
    new ZoottError('INVALID_PATH', `${JSON.stringify(path)}: ${why}`, { path, op });
  if (typeof path !== 'string' || path.length === 0) throw bad('a path must be a non-empty string');
  if (path[0] !== '/') throw bad("a path must start with '/'");
  if (path === '/') return;
  if (path.endsWith('/')) throw bad("a path must not end with '/'");
  for (const segment of path.slice(1).split('/')) {
    if (segment === '') throw bad('empty segment');
    if (segment === '.' || segment === '..') throw bad('relative segments are not allowed');
  }
  // ZooKeeper's PathUtils rejects these code points.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly the characters to reject
  if (/[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/.test(path))
    throw bad('contains a character ZooKeeper rejects');
}

export function joinPath(...parts: string[]): string {
  const joined = parts
    .flatMap((p) => p.split('/'))
    .filter((s) => s !== '')
    .join('/');
  return `/${joined}`;
}

export function parentPath(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
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

export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

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
