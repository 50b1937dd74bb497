import { execFileSync } from 'node:child_process';
import { closeSync, fstatSync, openSync, readFileSync, type Stats, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname } from 'node:path';
import { ZoottError } from '@zoott/core';

// Files are trusted the way ssh trusts its own: what a config file, an auth file or a handlers
// module says decides what the program runs, as whom, and where its credentials go, so such a
// file counts only when it is owned by the user running the program or by root, and nobody
// else may write it; a file holding credentials may not even be read by anyone else. Where a
// file was found (--config, a variable, the working directory) lifts none of this: a
// zoott.config.yaml another user dropped in the directory a root worker starts in is exactly
// what this refuses.

/** What a file is to the program: it names it in its errors. */
export type TrustedKind = 'config file' | 'auth file' | 'handlers module';

/** How strict: `private` files (credentials) may not be readable by group or others either. */
export interface TrustRule {
  kind: TrustedKind;
  field: string;
  private?: boolean;
}

/** A mode as `ls -l` and chmod print it: `0644`. */
export function modeText(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
}

/** A user for messages: `name (uid n)`, or `uid n` when the user database has no name. */
function who(uid: number): string {
  try {
    const line = execFileSync('getent', ['passwd', String(uid)], {
      encoding: 'utf8',
      stdio: 'pipe',
    });
    const name = line.split(':')[0];
    if (name) return `${name} (uid ${uid})`;
  } catch {
    // Not in the user database.
  }
  return `uid ${uid}`;
}

function myUid(): number {
  return process.geteuid?.() ?? userInfo().uid;
}

/**
 * Why `st` (of `path`) may not be trusted under `rule`, or null when it may.
 * Exposed for tests and for programs that check a file they read otherwise.
 */
export function distrust(
  path: string,
  st: Pick<Stats, 'uid' | 'mode'>,
  rule: { kind: string; private?: boolean },
): string | null {
  const me = myUid();
  const owner = `owned by ${who(st.uid)}, mode ${modeText(st.mode)}`;
  if (st.uid !== me && st.uid !== 0)
    return `${rule.kind} ${path} is ${owner}: only a file owned by you (${who(me)}) or root is trusted, since whoever may change it controls this program. If it is yours: chown ${me} ${path}; if not, remove it or start elsewhere`;
  if ((st.mode & 0o022) !== 0) {
    const by = [st.mode & 0o020 ? 'its group' : '', st.mode & 0o002 ? 'others' : '']
      .filter(Boolean)
      .join(' and ');
    return `${rule.kind} ${path} is ${owner}: writable by ${by}, who would control this program. Fix: chmod go-w ${path}`;
  }
  if (rule.private && (st.mode & 0o077) !== 0)
    return `${rule.kind} ${path} is ${owner}: it holds credentials, and its group or others may read it. Fix: chmod 600 ${path}`;
  return null;
}

function refuse(why: string, rule: TrustRule): ZoottError {
  return new ZoottError('INVALID_CONFIG', `refusing ${why}`, { field: rule.field });
}

/**
 * Reads a file only if it may be trusted (see the top of this module): opened once, its owner
 * and mode checked on what was opened, and read from there, so it cannot be swapped between
 * the check and the read. Returns the text and what was checked, for {@link checkPrivate}.
 *
 * @throws ZoottError INVALID_CONFIG naming the file, its owner and mode, and the fix; the
 *   errors of `open` and `read` as they are (the caller words them).
 */
export function readTrusted(path: string, rule: TrustRule): { text: string; stat: Stats } {
  const fd = openSync(path, 'r');
  try {
    const stat = fstatSync(fd);
    const why = distrust(path, stat, rule);
    if (why) throw refuse(why, rule);
    return { text: readFileSync(fd, 'utf8'), stat };
  } finally {
    closeSync(fd);
  }
}

/**
 * Refuses a file read by {@link readTrusted} that turned out to hold credentials (a config
 * file with `auth:`) while its group or others may read it.
 *
 * @throws ZoottError INVALID_CONFIG naming the file, its owner and mode, and the fix.
 */
export function checkPrivate(path: string, stat: Stats, rule: TrustRule): void {
  const why = distrust(path, stat, { ...rule, private: true });
  if (why) throw refuse(why, rule);
}

/**
 * Checks a module before it is imported: the file (links followed, as import does) and the
 * directory holding it, which must not let others swap the file between the check and the
 * import (a directory others may write is accepted only with the sticky bit, as /tmp).
 *
 * @throws ZoottError INVALID_CONFIG naming the file or directory, its owner and mode, and the fix.
 */
export function checkTrustedModule(path: string, rule: TrustRule): void {
  const st = statSync(path);
  const why = distrust(path, st, rule);
  if (why) throw refuse(why, rule);
  const dir = dirname(path);
  const stats = statSync(dir);
  // A sticky directory (as /tmp) lets others add files but not rename or remove this one.
  const mode = (stats.mode & 0o1000) !== 0 ? stats.mode & ~0o022 : stats.mode;
  const dirWhy = distrust(
    dir,
    { uid: stats.uid, mode },
    { kind: `the directory of ${rule.kind} ${path},` },
  );
  if (dirWhy) throw refuse(dirWhy, rule);
}
