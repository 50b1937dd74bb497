import { isZoottError } from '../../contract/errors.js';

/**
 * What went wrong in `err`, to be quoted inside another error's message. A ZoottError's
 * message starts with its code; quoted as is inside an error that has a code of its own, the
 * reader would get two codes in a row ("INVALID_CONFIG: ...: INVALID_ACL_SPEC: ...").
 */
export function reasonOf(err: unknown): string {
  if (isZoottError(err)) {
    const prefix = `${err.code}: `;
    return err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
