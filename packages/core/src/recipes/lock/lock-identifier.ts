import { ZoottError } from '../../contract/errors.js';
import { encodeJson, utf8 } from '../../contract/paths.js';

/**
 * Who holds a lock: `id` decides ownership (two processes must never share one); `val` is
 * free-form data stored with it.
 */
export interface LockIdentifier {
  id: string;
  val: unknown;
}

/** A string identifier, or `{ id, val }`, as a checked `LockIdentifier`. */
export function toIdentifier(identifier: string | { id: string; val?: unknown }): LockIdentifier {
  if (typeof identifier === 'string' && identifier !== '') return { id: identifier, val: null };
  if (
    typeof identifier === 'object' &&
    identifier !== null &&
    typeof identifier.id === 'string' &&
    identifier.id !== ''
  ) {
    return { id: identifier.id, val: identifier.val ?? null };
  }
  throw new ZoottError(
    'INVALID_CONFIG',
    `a lock identifier is a non-empty string or { id, val }, got ${JSON.stringify(identifier)}`,
    { field: 'identifier' },
  );
}

/**
 * Lock node data: JSON `{"id": ..., "val": ...}`, the format zkutil's ZKLock writes, so zoott
 * and Python processes can contend for the same lock.
 */
export function encodeIdentifier(identifier: LockIdentifier): Uint8Array {
  return encodeJson({ id: identifier.id, val: identifier.val });
}

/**
 * Reads lock node data. Older zkutil versions stored the bare id string, so data that is not
 * a JSON object with a string `id` is taken as the id itself.
 */
export function decodeIdentifier(data: Uint8Array): LockIdentifier {
  const text = utf8.decode(data);
  try {
    const parsed: unknown = JSON.parse(text);
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      typeof (parsed as LockIdentifier).id === 'string'
    ) {
      return { id: (parsed as LockIdentifier).id, val: (parsed as LockIdentifier).val ?? null };
    }
  } catch {
    // Not JSON: the bare-string format.
  }
  return { id: text, val: null };
}
