import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Job cgroups: every job of this process runs in a cgroup v2 of its own, below one made for
// the process. A cgroup holds whatever the job starts, a descendant that called `setsid` or
// double-forked included, and `cgroup.kill` (Linux 5.14+) SIGKILLs all of it in one write,
// forks in flight included: what a process group cannot do.

/** Where this process may make job cgroups, or why it may not. */
export type CgroupSupport = { ok: true; root: string } | { ok: false; reason: string };

/** The cgroup v2 mount point, from a mountinfo text (`/proc/self/mountinfo`). */
export function cgroup2Mount(mountinfo: string): string | null {
  for (const line of mountinfo.split('\n')) {
    const [mount, fs] = line.split(' - ');
    if (fs === undefined || !fs.startsWith('cgroup2 ')) continue;
    const point = mount!.split(' ')[4];
    // mountinfo escapes spaces and the like as \040: octal escapes of one byte each.
    if (point)
      return point.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  }
  return null;
}

/** This process's cgroup v2 path (the `0::` line of `/proc/self/cgroup`), or null. */
export function ownCgroup(procCgroup: string): string | null {
  const line = procCgroup.split('\n').find((l) => l.startsWith('0::'));
  return line === undefined ? null : line.slice(3);
}

let support: CgroupSupport | undefined;

/**
 * Makes (once per process) the cgroup this process's jobs go under: `zoott-jobs.<pid>.<random>`
 * in its own cgroup v2. Refused (and then never tried again) where there is no cgroup v2
 * mount, the process may not write there (not root, no delegation), or the kernel has no
 * `cgroup.kill`.
 */
export function jobCgroupSupport(): CgroupSupport {
  if (support) return support;
  support = probe();
  return support;
}

function probe(): CgroupSupport {
  if (process.platform !== 'linux') return { ok: false, reason: 'cgroups are Linux only' };
  let mount: string | null;
  let own: string | null;
  try {
    mount = cgroup2Mount(readFileSync('/proc/self/mountinfo', 'utf8'));
    own = ownCgroup(readFileSync('/proc/self/cgroup', 'utf8'));
  } catch (err) {
    return { ok: false, reason: `cannot read /proc/self: ${(err as Error).message}` };
  }
  if (mount === null) return { ok: false, reason: 'no cgroup v2 file system is mounted' };
  if (own === null) return { ok: false, reason: 'this process is in no cgroup v2' };
  const root = join(mount, own, `zoott-jobs.${process.pid}.${randomBytes(4).toString('hex')}`);
  try {
    mkdirSync(root);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { ok: false, reason: `cannot make ${root} (${code ?? (err as Error).message})` };
  }
  if (!existsSync(join(root, 'cgroup.kill'))) {
    removeCgroup(root);
    return { ok: false, reason: 'the kernel has no cgroup.kill (Linux 5.14 or newer has)' };
  }
  return { ok: true, root };
}

let seq = 0;
/** Empty job cgroups, ready for the next job: making and removing one costs the kernel ms. */
const spare: string[] = [];

/**
 * A cgroup for one job under `root`: an empty one a finished job gave back, else a new one.
 * (Making a cgroup and removing it waits on the kernel, about 5 ms each on a busy host, in
 * the worker's event loop: reused, a job pays only its own move into it.)
 */
export function takeJobCgroup(root: string): string {
  const path = spare.pop();
  if (path !== undefined) return path;
  const fresh = join(root, `job-${++seq}`);
  mkdirSync(fresh);
  return fresh;
}

/** Gives back a job cgroup that is empty now, for the next job. */
export function giveBackJobCgroup(path: string): void {
  spare.push(path);
}

/** SIGKILLs every process in the cgroup (and below) at once. Never throws. */
export function killCgroup(path: string): void {
  try {
    writeFileSync(join(path, 'cgroup.kill'), '1');
  } catch {
    // Gone already.
  }
}

/** Pids in the cgroup now (empty when it is gone). */
export function cgroupPids(path: string): number[] {
  try {
    return readFileSync(join(path, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Whether any process is left in the cgroup (`populated 1` in `cgroup.events`). */
export function cgroupPopulated(path: string): boolean {
  try {
    return /^populated 1$/m.test(readFileSync(join(path, 'cgroup.events'), 'utf8'));
  } catch {
    return false;
  }
}

/** Removes an empty cgroup; false when it still holds processes (or cannot be removed). */
export function removeCgroup(path: string): boolean {
  try {
    rmdirSync(path);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
