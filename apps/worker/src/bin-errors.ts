import { isZoottError } from '@zoott/core';
import { zkSecurityHint } from '@zoott/jobs/config';

/**
 * Exit codes of `zoott-worker` when it cannot start. They match the CLI's for the same
 * causes, so one script (or a service manager's restart policy) can branch on either tool.
 */
export const WorkerExit = {
  /** The session closed under a running worker. */
  FAILURE: 1,
  /** Bad configuration: flags, environment, config file, handlers module. */
  CONFIG: 2,
  /** ZooKeeper could not be reached (refused, no answer, or the session was lost). */
  UNREACHABLE: 3,
  /** The server refused the credentials, or they may not touch the world. */
  AUTH: 4,
  /** The world was never initialised (and --create-world was not given). */
  NOT_FOUND: 5,
} as const;

/** The exit code of a start-up error, and what to do about it. */
export function exitCodeOf(err: unknown): { code: number; hint?: string } {
  if (!isZoottError(err)) return { code: WorkerExit.CONFIG };
  switch (err.code) {
    case 'SESSION_EXPIRED':
      // Connected, then the session was lost while starting: the address is right.
      return {
        code: WorkerExit.UNREACHABLE,
        hint: 'the ZooKeeper session was lost while starting (expired by the server, or the connection was down longer than the session timeout); start the worker again',
      };
    case 'CONNECTION_LOSS':
    case 'OPERATION_TIMEOUT':
    case 'NO_ZOOKEEPER':
      return {
        code: WorkerExit.UNREACHABLE,
        // A TLS connect that cannot work names the setting to change.
        hint:
          zkSecurityHint(err) ??
          'is ZooKeeper running there? Check --connect / ZOOTT_CONNECT / the config file',
      };
    case 'AUTH_FAILED':
    case 'NO_AUTH':
      return {
        code: WorkerExit.AUTH,
        hint:
          zkSecurityHint(err) ??
          'check --auth-file / ZOOTT_AUTH (user:password or digest:user:password)',
      };
    case 'WORLD_NOT_INITIALISED':
      return {
        code: WorkerExit.NOT_FOUND,
        hint: 'run `zoott init <world>` first, or start the worker with --create-world',
      };
    default: {
      // A certificate or key connectZk could not use names its option: say which setting.
      const hint = zkSecurityHint(err);
      return hint ? { code: WorkerExit.CONFIG, hint } : { code: WorkerExit.CONFIG };
    }
  }
}
