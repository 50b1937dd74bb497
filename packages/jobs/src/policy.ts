import { realpathSync } from 'node:fs';
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
 * A policy from a list of absolute paths and globs, matched against the canonical real
 * path of an executable: after PATH lookup, with every symlink, `.` and `..` resolved
 * (see `resolveExecutable`), and that real path is what the worker executes. `*` matches
 * within one path segment, `**` across segments, `?` one character; anything else is
 * literal. An empty list allows nothing.
 *
 * The entries are canonicalised once, here (when the worker starts): a literal entry that
 * names a link (`/bin/sh`, `/usr/bin/python3`) allows the file it points to now, and the
 * directory part of a glob before its first wildcard is resolved the same way (`/bin/*`
 * is `/usr/bin/*` on a merged-/usr system). A link retargeted later is judged by its new
 * target. The policy itself refuses any path that is not canonical (relative, `.`, `..`,
 * `//`, a trailing `/`), so a caller that hands it an unresolved path is refused rather
 * than matched on text.
 *
 * @throws ZoottError INVALID_CONFIG for an entry that is not an absolute path or glob, or
 * that holds `.`, `..` or empty segments.
 */
export function execPolicy(patterns: readonly string[]): ExecPolicy {
  const regexes = patterns.flatMap((pattern, index) => {
    const field = `allowExec[${index}]`;
    if (typeof pattern !== 'string' || !pattern.startsWith('/'))
      throw new ZoottError(
        'INVALID_CONFIG',
        `${field} ${JSON.stringify(pattern)}: must be an absolute path or glob (starting with /)`,
        { field },
      );
    if (!isCanonicalPath(pattern))
      throw new ZoottError(
        'INVALID_CONFIG',
        `${field} ${JSON.stringify(pattern)}: must not hold '.', '..' or empty segments (write the path it means)`,
        { field },
      );
    return [...new Set([pattern, canonicalEntry(pattern)])].map(globToRegExp);
  });
  if (regexes.length === 0) return DENY_ALL;
  return (path) => isCanonicalPath(path) && regexes.some((r) => r.test(path));
}

/** An absolute path with no `.`, `..` or empty segments and no trailing `/`. */
export function isCanonicalPath(path: string): boolean {
  if (!path.startsWith('/')) return false;
  if (path === '/') return true;
  return path
    .slice(1)
    .split('/')
    .every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}

/**
 * The entry with its wildcard-free directory part (or, for a literal entry, the whole
 * path) replaced by its real path, when that exists; else the entry unchanged.
 */
function canonicalEntry(entry: string): string {
  const segments = entry.split('/');
  const wild = segments.findIndex((seg) => /[*?]/.test(seg));
  if (wild === -1) return realOr(entry);
  const prefix = segments.slice(0, wild).join('/') || '/';
  const real = realOr(prefix);
  const rest = segments.slice(wild).join('/');
  return real === '/' ? `/${rest}` : `${real}/${rest}`;
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
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
