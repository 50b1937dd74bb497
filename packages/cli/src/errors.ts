import { isZoottError, type ZoottError } from '@zoott/core';
import { adminCommand, NamespaceError } from '@zoott/core/internal';
import { zkSecurityHint } from '@zoott/jobs/config';
import { ExitCode } from './exit-codes.js';

/** An error the CLI reports as one line plus a hint, with a chosen exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = ExitCode.USAGE,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** What the user sees for an error: a message, what to do, and the exit code. */
export interface Explained {
  message: string;
  hint?: string;
  exitCode: number;
}

/** Where the CLI was talking to, so errors can name it. */
export interface ErrorContext {
  connect?: string;
  world?: string;
  /** Who the session is to ZooKeeper (`digest:alice`, `x509:CN=...`, `sasl:bob`), for NO_AUTH. */
  identities?: readonly string[];
}

/**
 * Turns any error into a message that says what was wrong and what to do. Stack traces are
 * for `--debug` only, so this never includes one.
 */
export function explain(err: unknown, ctx: ErrorContext = {}): Explained {
  if (err instanceof CliError)
    return { message: err.message, hint: err.hint, exitCode: err.exitCode };
  if (isZoottError(err)) return explainZoott(err, ctx);
  const errno = err as NodeJS.ErrnoException;
  if (errno && typeof errno === 'object' && errno.code === 'ENOENT' && errno.path)
    return { message: `no such file: ${errno.path}`, exitCode: ExitCode.NOT_FOUND };
  if (
    errno &&
    typeof errno === 'object' &&
    (errno.code === 'EACCES' || errno.code === 'EISDIR') &&
    errno.path
  )
    return { message: `cannot read ${errno.path}: ${errno.code}`, exitCode: ExitCode.USAGE };
  const message = err instanceof Error ? err.message : String(err);
  return {
    message,
    hint: 'this looks like a bug in zoott; run again with --debug for the stack trace',
    exitCode: ExitCode.FAILURE,
  };
}

/** The chroot of a connect string (`h1:2181,h2:2181/myapp` → `/myapp`), `''` for none. */
export function chrootOf(connect: string | undefined): string {
  const at = connect?.indexOf('/') ?? -1;
  return connect && at >= 0 ? connect.slice(at).replace(/\/$/, '') : '';
}

function explainZoott(err: ZoottError, ctx: ErrorContext): Explained {
  const where = ctx.connect ? ` at ${ctx.connect}` : '';
  switch (err.code) {
    case 'CONNECTION_LOSS':
    case 'OPERATION_TIMEOUT':
    case 'SESSION_EXPIRED':
    case 'NO_ZOOKEEPER':
      return {
        message: `cannot reach ZooKeeper${where}: ${err.message}`,
        hint:
          zkSecurityHint(err) ??
          'is the server running and reachable? Check --connect (or ZOOTT_CONNECT / the config file); `zoott demo` runs without any server',
        exitCode: ExitCode.UNREACHABLE,
      };
    case 'AUTH_FAILED':
      return {
        message: `authentication failed${where}: ${err.message}`,
        hint: zkSecurityHint(err) ?? 'check --auth user:password (or ZOOTT_AUTH)',
        exitCode: ExitCode.AUTH,
      };
    case 'NO_AUTH':
      // A node the world needs that someone else holds: what only they can do about it.
      if (err instanceof NamespaceError)
        return {
          message: err.reason,
          hint: `these credentials cannot fix it; an administrator must run: ${adminCommand(err.fix, chrootOf(ctx.connect))}`,
          exitCode: ExitCode.AUTH,
        };
      return {
        message: `not authorised${err.path ? ` for ${err.path}` : ''}${where}${identities(ctx)}`,
        hint: 'the node has an ACL these identities do not satisfy: pass --auth user:password (digest), log in with --zk-sasl-file (sasl), or connect with the client certificate its x509 entry names (--zk-tls-cert and --zk-tls-key)',
        exitCode: ExitCode.AUTH,
      };
    case 'WORLD_NOT_INITIALISED':
      return {
        message: err.message,
        hint: `run \`zoott init ${ctx.world ?? '<world>'}\` first, or pick another --world`,
        exitCode: ExitCode.NOT_FOUND,
      };
    case 'NO_SUCH_TASK':
      return {
        message: err.message,
        hint: '`zoott ls pending|working|completed|failed` lists the tasks there are',
        exitCode: ExitCode.NOT_FOUND,
      };
    case 'NO_NODE':
      return {
        message: `no such node${err.path ? ` ${err.path}` : ''}${where}`,
        hint: 'a chroot in the connect string must exist (`zoott init` creates it)',
        exitCode: ExitCode.NOT_FOUND,
      };
    case 'INVALID_PATTERN':
      return {
        message: `invalid pattern: ${err.message}`,
        hint: 'patterns are regular expressions matched against the whole name/type, e.g. --parent-name "requestFile_.*"',
        exitCode: ExitCode.USAGE,
      };
    case 'TASK_STATE':
      return { message: err.message, exitCode: ExitCode.CONFLICT };
    case 'WAIT_TIMEOUT':
    case 'LOCK_TIMEOUT':
      return { message: err.message, exitCode: ExitCode.TIMEOUT };
    case 'INVALID_TASK':
    case 'INVALID_JOB':
    case 'INVALID_CONFIG':
    case 'INVALID_PATH':
    case 'INVALID_ACL_SPEC':
    case 'BAD_ARGUMENTS':
    case 'DATA_TOO_LARGE':
      return { message: err.message, exitCode: ExitCode.USAGE };
    default:
      return {
        message: err.message,
        hint: 'run again with --debug for details',
        exitCode: ExitCode.FAILURE,
      };
  }
}

/** `; this session is digest:alice, x509:CN=...`: who the refused session was, by scheme. */
function identities(ctx: ErrorContext): string {
  if (ctx.identities === undefined) return '';
  if (ctx.identities.length === 0)
    return '; this session has no identity (no --auth, no SASL login, no client certificate)';
  return `; this session is ${ctx.identities.join(', ')}`;
}
