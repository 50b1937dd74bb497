import { accessSync, constants, openSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { basename } from 'node:path';

// The launcher: the first thing a job process runs, as the worker's user, before it execs the
// job (through `setpriv` where that switches user). A few shell builtins, so a job start costs
// a shell's start and no more. Nothing of the job passes through the shell's parsing: the job's
// path and arguments are the launcher's own arguments, executed as `"$@"`.
//
// It does what the worker's `spawn` cannot:
// - it moves itself into the job's cgroup (argument 1, empty for none), so the job and all it
//   starts are in it from their first instruction;
// - it closes every descriptor above the last one the job is given (2, or 3 with the report
//   channel). Node marks the descriptors it opens close-on-exec, but not all of those the
//   worker inherited (a shell's `exec 30<file`, a service manager's), and a job would
//   otherwise read through one what its user may not open.

/**
 * The launcher script: `$1` the cgroup (empty for none), `$2` the last descriptor kept, `$3`
 * the first one the shell cannot close, `$4` the job's PWD (`-`: none; `=<value>`: that
 * value), then the command. The shell sets PWD itself, and the job's environment is exactly
 * what the worker gives it, so PWD is put back.
 */
const SCRIPT = [
  'c=$1 k=$2 l=$3 p=$4; shift 4',
  'if [ -n "$c" ]; then echo $$ > "$c/cgroup.procs" || { echo "zoott: cannot move the job into its cgroup $c" >&2; exit 125; }; fi',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
  'for f in /proc/self/fd/*; do n=${f##*/}; if [ "$n" -gt "$k" ] && [ "$n" -lt "$l" ]; then eval "exec $n>&-"; fi; done',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
  'if [ "$p" = - ]; then unset PWD; else PWD=${p#=}; export PWD; fi',
  'exec "$@"',
].join('\n');

/** A shell that runs the launcher, and what it needs told. */
export interface LauncherShell {
  path: string;
  /**
   * Arguments before the script. bash reads no startup file with `--norc --noprofile` (it
   * would read `~/.bashrc`, the job user's, when its stdin is a socket, as Node's pipes are:
   * that user's code run as the worker's), and with `-p` neither BASH_ENV nor functions
   * exported in the environment.
   */
  flags: string[];
  /**
   * The first descriptor it cannot close: none for bash; 10 for sh (dash, Debian's sh, names
   * one digit only), whose higher inherited descriptors the worker points at /dev/null.
   */
  limit: number;
  /** bash exports SHLVL to what it execs; it is then removed (`env -u SHLVL`). */
  addsShlvl: boolean;
}

const NO_LIMIT = 2 ** 31 - 1;
const BASH_FLAGS = ['--norc', '--noprofile', '-p'];
let shells: { sh: LauncherShell; bash: LauncherShell | null } | undefined;

/**
 * The shells a launcher may run in: /bin/sh, the fastest to start (dash on Debian; bash on
 * Red Hat systems, then told as bash), and bash where installed, which can close any
 * descriptor.
 */
function launcherShells(): { sh: LauncherShell; bash: LauncherShell | null } {
  if (shells) return shells;
  let bash: LauncherShell | null = null;
  for (const path of ['/bin/bash', '/usr/bin/bash']) {
    try {
      accessSync(path, constants.X_OK);
      bash = { path, flags: BASH_FLAGS, limit: NO_LIMIT, addsShlvl: true };
      break;
    } catch {
      // Not here.
    }
  }
  let shIsBash = false;
  try {
    shIsBash = basename(realpathSync('/bin/sh')).startsWith('bash');
  } catch {
    // No /bin/sh to look at: spawning it fails and says so.
  }
  const sh: LauncherShell = shIsBash
    ? { path: '/bin/sh', flags: BASH_FLAGS, limit: NO_LIMIT, addsShlvl: true }
    : { path: '/bin/sh', flags: [], limit: 10, addsShlvl: false };
  shells = { sh, bash };
  return shells;
}

/**
 * The shell for a launch now: /bin/sh, unless this process holds an inheritable descriptor
 * it cannot close (10 or above, for dash): then bash where installed.
 */
export function launcherShell(): LauncherShell {
  const { sh, bash } = launcherShells();
  if (sh.limit === NO_LIMIT || bash === null) return sh;
  return inheritable(sh.limit).length > 0 ? bash : sh;
}

let leakSeen: { at: number; fds: number[] } | undefined;

/**
 * {@link leakedFds} from 10 up, looked at again at most once a second: only inheritance (at
 * start) and native code make a descriptor without close-on-exec, and a look reads every
 * descriptor's fdinfo.
 */
function inheritable(from: number): number[] {
  const now = Date.now();
  if (!leakSeen || now - leakSeen.at > 1000) leakSeen = { at: now, fds: leakedFds(from) };
  return leakSeen.fds;
}

/**
 * The descriptors of this process at or above `from` that a child would inherit (no
 * close-on-exec flag in `/proc/self/fdinfo`).
 */
export function leakedFds(from: number): number[] {
  const out: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return out;
  }
  for (const name of names) {
    const fd = Number(name);
    if (!(fd >= from)) continue;
    try {
      const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
      // O_CLOEXEC as fdinfo shows it (octal 02000000).
      if (flags && (Number.parseInt(flags[1]!, 8) & 0o2000000) === 0) out.push(fd);
    } catch {
      // Closed meanwhile (the directory's own descriptor, say).
    }
  }
  return out.sort((a, b) => a - b);
}

let devNull: number | undefined;

/** What to spawn: the launcher around `argv`, and the stdio entries past the job's own. */
export interface Launch {
  file: string;
  args: string[];
  /** stdio entries from index `lastFd + 1` on: /dev/null over inherited descriptors sh cannot close. */
  extraStdio: Array<number | 'ignore'>;
}

/**
 * How to start `argv` (the job, or setpriv and the job) through the launcher: into `cgroup`
 * (or none), keeping descriptors 0 to `lastFd`, with the environment `env` exactly.
 */
export function launch(
  argv: readonly string[],
  cgroup: string | null,
  lastFd: number,
  env: Readonly<Record<string, string>>,
  using: LauncherShell = launcherShell(),
): Launch {
  const extraStdio: Array<number | 'ignore'> = [];
  const high = using.limit < NO_LIMIT ? inheritable(using.limit) : [];
  if (high.length > 0) {
    devNull ??= openSync('/dev/null', 'r');
    for (let fd = lastFd + 1; fd <= high[high.length - 1]!; fd++)
      extraStdio.push(high.includes(fd) ? devNull : 'ignore');
  }
  // env would take a command holding '=' for a variable: only setpriv's path (or a job's path
  // without setpriv, holding none) comes first.
  const command =
    using.addsShlvl && env.SHLVL === undefined && !argv[0]!.includes('=')
      ? ['/usr/bin/env', '-u', 'SHLVL', ...argv]
      : argv;
  return {
    file: using.path,
    args: [
      ...using.flags,
      '-c',
      SCRIPT,
      'zoott-job',
      cgroup ?? '',
      String(lastFd),
      String(using.limit),
      env.PWD === undefined ? '-' : `=${env.PWD}`,
      ...command,
    ],
    extraStdio,
  };
}
