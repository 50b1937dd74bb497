import { isZoottError } from '@zoott/core';
import { ExitCode, zkSecurityHint } from '@zoott/jobs/config';

/**
 * Exit codes of `zoott-worker` when it cannot start, from the table the three programs share
 * (a bad handlers module is bad configuration: USAGE).
 */
export const WorkerExit = {
  FAILURE: ExitCode.FAILURE,
  CONFIG: ExitCode.USAGE,
  UNREACHABLE: ExitCode.UNREACHABLE,
  AUTH: ExitCode.AUTH,
  NOT_FOUND: ExitCode.NOT_FOUND,
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
