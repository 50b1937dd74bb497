import type { TaskKey } from '@zoott/core';
import { decodeKey } from '@zoott/core/internal';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';

/**
 * Reads a task reference from the command line: its pending-area key `a|b|c` or its tree
 * path `a/b/c` (a leading `/` is allowed). Names can contain neither `|` nor `/`, so both
 * forms are unambiguous.
 */
export function parseTaskRef(ref: string): TaskKey {
  const text = ref.trim();
  if (text === '')
    throw new CliError(
      'task reference is empty',
      ExitCode.USAGE,
      'name a task as a|b|c (key) or a/b/c (path)',
    );
  const key = text.includes('|')
    ? text
    : text.replace(/^\/+/, '').replace(/\/+$/, '').replace(/\//g, '|');
  try {
    return decodeKey(key);
  } catch (err) {
    throw new CliError(
      `task reference ${JSON.stringify(ref)}: ${(err as Error).message}`,
      ExitCode.USAGE,
      'name a task as a|b|c (key) or a/b/c (path), e.g. requestFile_a|downloadFile_a',
    );
  }
}

/** The key as users type it back: `a|b|c`. */
export function showKey(key: TaskKey): string {
  return key.join('|');
}
