import { type Acl, OPEN_ACL, ZoottError } from '@zoott/core';
import { DEFAULT_MAX_DATA_BYTES, validateAcl } from '@zoott/core/internal';
import {
  type ResolvedSasl,
  type ResolvedTls,
  resolveSasl,
  resolveTls,
  type ZkSaslOptions,
  type ZkTlsOptions,
} from './security-options.js';

/** Retry of reads and idempotent writes after a connection loss. */
export interface ZkRetryOptions {
  /** Attempts in all, the first included (default 10). */
  maxAttempts?: number;
  /** First backoff; it doubles per attempt up to 1 s, with jitter (default 100 ms). */
  baseDelayMs?: number;
  /** No new attempt starts later than this after the first (default: the session timeout). */
  deadlineMs?: number;
}

/** Options of `connectZk`: session and request timeouts, credentials, default ACL, retries. */
export interface ZkOptions {
  /** Requested session timeout; the server clamps it to its 2..20 ticks range (default 10000). */
  sessionTimeoutMs?: number;
  /** Longest wait for any one reply before the call fails (default: twice the session timeout). */
  requestTimeoutMs?: number;
  /** Longest wait for the first connection (default: the session timeout). */
  connectTimeoutMs?: number;
  /** Credentials added to every session, e.g. `{ scheme: 'digest', auth: 'user:password' }`. */
  auth?: Array<{ scheme: string; auth: string }>;
  /** ACL for creates that give none (default OPEN_ACL). */
  defaultAcl?: readonly Acl[];
  retry?: ZkRetryOptions;
  /**
   * Protected sequential creates (default true): the node name carries a unique marker before
   * the sequence number, so a create whose reply was lost is found after the reconnect
   * instead of being made twice. Without it such a create fails with CONNECTION_LOSS.
   */
  protectSequential?: boolean;
  /** Largest node data accepted (default 1047552, leaving room in ZooKeeper's 1 MB packet). */
  maxDataBytes?: number;
  /** TLS to the servers' `secureClientPort`: `true` for the defaults, or CA, client certificate, ... */
  tls?: ZkTlsOptions | boolean;
  /** SASL DIGEST-MD5 user and password, authenticated on every connection before any request. */
  sasl?: ZkSaslOptions;
}

export interface ResolvedOptions {
  sessionTimeoutMs: number;
  requestTimeoutMs: number;
  connectTimeoutMs: number;
  auth: Array<{ scheme: string; auth: string }>;
  defaultAcl: readonly Acl[];
  retry: Required<ZkRetryOptions>;
  protectSequential: boolean;
  maxDataBytes: number;
  tls: ResolvedTls | null;
  sasl: ResolvedSasl | null;
}

/**
 * ZooKeeper's jute.maxbuffer is 1048575 bytes per packet; keep 1 KiB for paths, ACLs and
 * headers. Whole requests are checked against `maxDataBytes` + FRAME_ALLOWANCE_BYTES
 * (@zoott/core), exactly as encoded.
 */
export const ZK_MAX_DATA_BYTES = DEFAULT_MAX_DATA_BYTES;

function positiveInt(value: unknown, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new ZoottError(
      'INVALID_CONFIG',
      `${field} must be a positive integer, got ${JSON.stringify(value)}`,
      { field },
    );
  }
  return value;
}

/** Checks every option and fills in the defaults; throws INVALID_CONFIG naming the field. */
export function resolveOptions(options: ZkOptions = {}): ResolvedOptions {
  const sessionTimeoutMs = positiveInt(options.sessionTimeoutMs, 10_000, 'sessionTimeoutMs');
  const auth = options.auth ?? [];
  if (!Array.isArray(auth)) {
    throw new ZoottError('INVALID_CONFIG', 'auth must be an array of { scheme, auth }', {
      field: 'auth',
    });
  }
  auth.forEach((credential, index) => {
    if (
      typeof credential?.scheme !== 'string' ||
      credential.scheme === '' ||
      typeof credential.auth !== 'string'
    ) {
      throw new ZoottError(
        'INVALID_CONFIG',
        `auth[${index}] needs a non-empty scheme and an auth string`,
        {
          field: `auth[${index}]`,
        },
      );
    }
  });
  const defaultAcl = options.defaultAcl ?? OPEN_ACL;
  try {
    validateAcl(defaultAcl);
  } catch (err) {
    throw new ZoottError('INVALID_CONFIG', `defaultAcl: ${(err as Error).message}`, {
      field: 'defaultAcl',
    });
  }
  const retry = options.retry ?? {};
  return {
    sessionTimeoutMs,
    requestTimeoutMs: positiveInt(
      options.requestTimeoutMs,
      2 * sessionTimeoutMs,
      'requestTimeoutMs',
    ),
    connectTimeoutMs: positiveInt(options.connectTimeoutMs, sessionTimeoutMs, 'connectTimeoutMs'),
    auth: auth.map((a) => ({ scheme: a.scheme, auth: a.auth })),
    // A copy, checked once here: every create without an ACL of its own uses it unchecked.
    defaultAcl: Object.freeze(defaultAcl.map((a) => Object.freeze({ ...a }))),
    retry: {
      maxAttempts: positiveInt(retry.maxAttempts, 10, 'retry.maxAttempts'),
      baseDelayMs: positiveInt(retry.baseDelayMs, 100, 'retry.baseDelayMs'),
      deadlineMs: positiveInt(retry.deadlineMs, sessionTimeoutMs, 'retry.deadlineMs'),
    },
    protectSequential: options.protectSequential ?? true,
    maxDataBytes: positiveInt(options.maxDataBytes, ZK_MAX_DATA_BYTES, 'maxDataBytes'),
    tls: resolveTls(options.tls),
    sasl: resolveSasl(options.sasl),
  };
}
