import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/**
 * Where an executable was found, or why it could not be (with the shell's exit code).
 * `path` is where it was found (relative names made absolute); `real` is the canonical
 * path of the file itself (no symlinks, no `.` or `..`): the path a policy decides on and
 * the path that is executed, so a link cannot point a check at one file and the run at
 * another.
 */
export type Resolution =
  | { ok: true; path: string; real: string }
  | { ok: false; exit: 126 | 127; error: string };

/**
 * Finds the file a job's `executable` names, the way a shell would but without one:
 * a name with a `/` is taken relative to `cwd` (or as is when absolute); a bare name is
 * looked up in the directories of `pathEnv` (the child's PATH). Empty PATH entries, which
 * a shell reads as "the current directory", are skipped so a job cannot pick up a file
 * dropped into its working directory. 127 = not found, 126 = found but not executable.
 */
export async function resolveExecutable(
  executable: string,
  cwd: string,
  pathEnv: string | undefined,
): Promise<Resolution> {
  if (executable.includes('/')) {
    const path = isAbsolute(executable) ? executable : resolve(cwd, executable);
    return checkFile(path, executable);
  }
  let lastProblem: Resolution | null = null;
  for (const dir of (pathEnv ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const found = await checkFile(join(dir, executable), executable);
    if (found.ok) return found;
    if (found.exit === 126) lastProblem = found;
  }
  return (
    lastProblem ?? {
      ok: false,
      exit: 127,
      error: `executable ${JSON.stringify(executable)} not found on PATH`,
    }
  );
}

async function checkFile(path: string, asGiven: string): Promise<Resolution> {
  try {
    const st = await stat(path);
    if (!st.isFile())
      return { ok: false, exit: 126, error: `${JSON.stringify(asGiven)} (${path}) is not a file` };
  } catch {
    return {
      ok: false,
      exit: 127,
      error: `executable ${JSON.stringify(asGiven)} (${path}) not found`,
    };
  }
  try {
    await access(path, constants.X_OK);
  } catch {
    return {
      ok: false,
      exit: 126,
      error: `${JSON.stringify(asGiven)} (${path}) is not executable`,
    };
  }
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    // Gone (or a link loop) between the stat and here.
    return {
      ok: false,
      exit: 127,
      error: `executable ${JSON.stringify(asGiven)} (${path}) not found`,
    };
  }
  return { ok: true, path, real };
}

/** Variables a job inherits by default: enough to find programs and handle text, no secrets. */
const INHERITED = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'];

/**
 * A minimal environment for job processes: PATH (a standard one when the worker has none),
 * HOME, LANG, LC_ALL, TZ and TMPDIR when set. The worker's own variables (credentials,
 * connection strings) are not passed on.
 */
export function minimalEnv(from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED) {
    const value = from[key];
    if (value !== undefined) env[key] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return env;
}
