import { execFileSync } from 'node:child_process';
import { ZoottError } from '@zoott/core';
import { parentDeathTool } from './process.js';

/**
 * The user job processes run as: they get its uid, its primary gid and its supplementary
 * groups (`initgroups`), and `HOME` is its home directory.
 */
export interface JobUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

/**
 * Looks a user up by name or numeric uid in the system's user database (`getent passwd`,
 * so NSS sources such as LDAP count too).
 *
 * @throws ZoottError INVALID_CONFIG (field `runAs`) when there is no such user.
 */
export function lookUpUser(user: string): JobUser {
  const bad = (why: string) =>
    new ZoottError('INVALID_CONFIG', `runAs ${JSON.stringify(user)}: ${why}`, { field: 'runAs' });
  if (user === '' || /[\s:]/.test(user)) throw bad('not a user name or uid');
  let line: string;
  try {
    line = execFileSync('getent', ['passwd', user], { encoding: 'utf8', stdio: 'pipe' }).trim();
  } catch {
    throw bad('no such user (getent passwd found nothing)');
  }
  const [name, , uid, gid, , home] = line.split('\n')[0]!.split(':');
  if (name === undefined || !/^\d+$/.test(uid ?? '') || !/^\d+$/.test(gid ?? ''))
    throw bad(`unexpected user database entry ${JSON.stringify(line)}`);
  return { name, uid: Number(uid), gid: Number(gid), home: home || '/' };
}

/** Whose identity the worker process itself has (for the checks below). */
export interface WorkerIdentity {
  uid: number;
}

/**
 * Decides whom job processes run as, for a worker that serves the job types:
 * - `runAs` unset, worker not root: the worker's own user (`null`: no switch);
 * - `runAs` unset, worker root: refused. A job running as root can read the worker's
 *   environment and command line (`/proc/<pid>/environ`, `cmdline`), so its ZooKeeper
 *   credentials, and everything else on the host;
 * - `runAs` naming the worker's own user (`--run-as root` for a root worker): that user,
 *   no switch. This is the explicit opt-in to the risk above;
 * - any other user: that user (`JobUser`); needs a root worker and util-linux `setpriv`,
 *   which switches uid, gid and groups in the job's own process before it execs the job.
 *
 * @throws ZoottError INVALID_CONFIG (field `runAs`) saying what to do.
 */
export function jobUser(
  runAs: string | undefined,
  worker: WorkerIdentity = { uid: process.getuid?.() ?? -1 },
): JobUser | null {
  if (runAs === undefined) {
    if (worker.uid !== 0) return null;
    throw new ZoottError(
      'INVALID_CONFIG',
      'runAs: this worker runs as root, so its jobs would too, and a job running as root can ' +
        "read the worker's credentials (/proc/<worker pid>/environ and cmdline) and anything " +
        'else on the host. Give --run-as <user> (ZOOTT_RUN_AS) to run jobs as an unprivileged ' +
        'user, or --run-as root to run them as root anyway',
      { field: 'runAs' },
    );
  }
  const user = lookUpUser(runAs);
  if (user.uid === worker.uid) return null;
  if (worker.uid !== 0)
    throw new ZoottError(
      'INVALID_CONFIG',
      `runAs ${JSON.stringify(runAs)}: switching jobs to another user needs a worker running as root (this one runs as uid ${worker.uid})`,
      { field: 'runAs' },
    );
  if (parentDeathTool() === null)
    throw new ZoottError(
      'INVALID_CONFIG',
      `runAs ${JSON.stringify(runAs)}: needs util-linux setpriv (with --pdeathsig) in /usr/bin or /bin to switch users`,
      { field: 'runAs' },
    );
  return user;
}
