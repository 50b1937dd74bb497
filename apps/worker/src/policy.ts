import { ZoottError } from '@zoott/core';
import { minimalEnv } from './jobs/index.js';

/**
 * The executable policy of a worker. Running executables named by queue messages is remote
 * code execution by design, so nothing runs unless it matches the `--allow-exec` list.
 */
export type ExecPolicy = (resolvedPath: string) => boolean;

/** Matches no executable: the default, so a worker only runs jobs after an explicit opt-in. */
export const DENY_ALL: ExecPolicy = () => false;

/**
 * A policy from a list of absolute paths and globs, matched against the resolved path of
 * an executable (after PATH lookup). `*` matches within one path segment, `**` across
 * segments, `?` one character; anything else is literal. An empty list allows nothing.
 *
 * @throws ZoottError INVALID_CONFIG for an entry that is not an absolute path or glob.
 */
export function execPolicy(patterns: readonly string[]): ExecPolicy {
  const regexes = patterns.map((p, i) => {
    if (typeof p !== 'string' || !p.startsWith('/'))
      throw new ZoottError(
        'INVALID_CONFIG',
        `allowExec[${i}] ${JSON.stringify(p)}: must be an absolute path or glob (starting with /)`,
        { field: `allowExec[${i}]` },
      );
    return globToRegExp(p);
  });
  if (regexes.length === 0) return DENY_ALL;
  return (path) => regexes.some((r) => r.test(path));
}

/** `/usr/bin/*` → `^/usr/bin/[^/]*$`; `**` crosses `/`. */
export function globToRegExp(glob: string): RegExp {
  let out = '^';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === '*') {
      if (glob[i + 1] === '*') {
        out += '.*';
        i++;
      } else out += '[^/]*';
    } else if (ch === '?') out += '[^/]';
    else out += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`${out}$`);
}

/**
 * The environment of job processes: the minimal set (PATH, HOME, LANG, LC_ALL, TZ, TMPDIR)
 * plus the variables named in `passEnv`, copied from `from` when set. Nothing else of the
 * worker's environment (credentials, connection strings) reaches a job.
 */
export function jobEnvironment(
  passEnv: readonly string[],
  from: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env = minimalEnv(from);
  for (const key of passEnv) {
    const value = from[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}
