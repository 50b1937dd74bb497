/**
 * One error class for all of zoott, with a registry of codes.
 *
 * Adapters translate their client library's failures into these codes, so engine and
 * recipe code can branch on `err.code` without ever seeing a driver's error objects.
 * The `zk` number is ZooKeeper's own wire code where one exists; adapters use it to map
 * server replies, and tools use it to print what a ZooKeeper operator would recognise.
 */
export const ErrorCodes = {
  // ZooKeeper server and session outcomes
  NO_NODE: { zk: -101, retryable: false, text: 'node does not exist' },
  NODE_EXISTS: { zk: -110, retryable: false, text: 'node already exists' },
  BAD_VERSION: { zk: -103, retryable: false, text: 'version does not match' },
  NOT_EMPTY: { zk: -111, retryable: false, text: 'node has children' },
  NO_CHILDREN_FOR_EPHEMERALS: {
    zk: -108,
    retryable: false,
    text: 'ephemeral nodes may not have children',
  },
  NO_AUTH: { zk: -102, retryable: false, text: 'not authorised' },
  AUTH_FAILED: { zk: -115, retryable: false, text: 'authentication failed' },
  INVALID_ACL: { zk: -114, retryable: false, text: 'invalid ACL' },
  BAD_ARGUMENTS: { zk: -8, retryable: false, text: 'bad arguments' },
  CONNECTION_LOSS: { zk: -4, retryable: true, text: 'connection to the server was lost' },
  OPERATION_TIMEOUT: { zk: -7, retryable: true, text: 'operation timed out' },
  SESSION_EXPIRED: { zk: -112, retryable: false, text: 'session expired' },
  SESSION_MOVED: { zk: -118, retryable: false, text: 'session moved to another server' },
  NOT_READ_ONLY: {
    zk: -119,
    retryable: false,
    text: 'state-changing request sent to a read-only server',
  },
  UNIMPLEMENTED: { zk: -6, retryable: false, text: 'operation is not implemented' },
  RUNTIME_INCONSISTENCY: { zk: -2, retryable: false, text: 'runtime inconsistency' },
  DATA_INCONSISTENCY: { zk: -3, retryable: false, text: 'data inconsistency' },
  MARSHALLING_ERROR: { zk: -5, retryable: false, text: 'marshalling error' },
  SYSTEM_ERROR: { zk: -1, retryable: false, text: 'system error' },
  API_ERROR: { zk: -100, retryable: false, text: 'API error' },
  UNKNOWN_SERVER_ERROR: {
    zk: null,
    retryable: false,
    text: 'server answered with an unknown error code',
  },
  CLOSED: { zk: null, retryable: false, text: 'the coordinator is closed' },
  // zoott's own
  INVALID_PATH: { zk: null, retryable: false, text: 'invalid node path' },
  DATA_TOO_LARGE: { zk: null, retryable: false, text: 'data exceeds the node size limit' },
  RESULT_NOT_JSON: { zk: null, retryable: false, text: 'the result cannot be stored as JSON' },
  INVALID_TASK: { zk: null, retryable: false, text: 'invalid task' },
  INVALID_PATTERN: { zk: null, retryable: false, text: 'invalid parent pattern' },
  INVALID_JOB: { zk: null, retryable: false, text: 'invalid job' },
  INVALID_CONFIG: { zk: null, retryable: false, text: 'invalid configuration' },
  INVALID_ACL_SPEC: { zk: null, retryable: false, text: 'invalid permission specification' },
  NO_SUCH_TASK: { zk: null, retryable: false, text: 'no such task' },
  WORLD_NOT_INITIALISED: { zk: null, retryable: false, text: 'the world was never initialised' },
  TASK_STATE: { zk: null, retryable: false, text: 'task is not in a state that allows this' },
  NOT_OWNER: { zk: null, retryable: false, text: 'this worker does not own the task' },
  WAIT_TIMEOUT: { zk: null, retryable: false, text: 'timed out waiting for a condition' },
  LOCK_TIMEOUT: { zk: null, retryable: false, text: 'timed out acquiring a lock' },
  ABORTED: { zk: null, retryable: false, text: 'operation was aborted' },
  NO_ZOOKEEPER: { zk: null, retryable: false, text: 'no ZooKeeper server available' },
} as const;

/** Every code a ZoottError can carry: ZooKeeper's own and zoott's (INVALID_TASK, ...). */
export type ErrorCode = keyof typeof ErrorCodes;

/** What a ZoottError says beyond its code: the path, operation, field and cause. */
export interface ZoottErrorDetails {
  /** Node path the failing operation addressed. */
  path?: string;
  /** Operation name: `create`, `get`, `multi`, `queue`, ... */
  op?: string;
  /** For `multi`: index of the operation that failed. */
  opIndex?: number;
  /** For `multi`: the code of every op (`null` for ops that would have succeeded). */
  opCodes?: Array<ErrorCode | null>;
  /** Field of the input that was rejected (task/job validation). */
  field?: string;
  cause?: unknown;
}

/** The one error type of zoott: a stable `code`, a message that says what is wrong, details. */
export class ZoottError extends Error {
  readonly code: ErrorCode;
  readonly path: string | undefined;
  readonly op: string | undefined;
  readonly opIndex: number | undefined;
  readonly opCodes: Array<ErrorCode | null> | undefined;
  readonly field: string | undefined;

  constructor(code: ErrorCode, message?: string, details: ZoottErrorDetails = {}) {
    const where = [details.op, details.path].filter(Boolean).join(' ');
    const text = message ?? ErrorCodes[code].text;
    super(`${code}: ${text}${where ? ` (${where})` : ''}`, { cause: details.cause });
    this.name = 'ZoottError';
    this.code = code;
    this.path = details.path;
    this.op = details.op;
    this.opIndex = details.opIndex;
    this.opCodes = details.opCodes;
    this.field = details.field;
  }

  /** Whether retrying the same request may succeed (connection trouble, not a verdict). */
  get retryable(): boolean {
    return ErrorCodes[this.code].retryable;
  }
}

/** Whether `err` is a ZoottError (with `code`, when given). */
export function isZoottError(err: unknown, code?: ErrorCode): err is ZoottError {
  return err instanceof ZoottError && (code === undefined || err.code === code);
}

/** The registry entry for a ZooKeeper wire code, or `UNKNOWN_SERVER_ERROR`. */
export function codeFromZk(zkCode: number): ErrorCode {
  for (const [code, entry] of Object.entries(ErrorCodes)) {
    if (entry.zk === zkCode) return code as ErrorCode;
  }
  return 'UNKNOWN_SERVER_ERROR';
}
