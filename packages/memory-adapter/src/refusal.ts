import type { ErrorCode } from '@zoott/core';

/**
 * A refusal from the server, before the client puts its own op name and path on it. Only the
 * client turns it into a ZoottError, because only the client knows the paths it was given
 * (a chroot is invisible to it).
 */
export class ServerRefusal extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly reason?: string,
  ) {
    super(reason ?? code);
  }
}

/** A failed multi: the index of the op that failed and ZooKeeper's per-op codes. */
export class MultiRefusal extends ServerRefusal {
  constructor(
    code: ErrorCode,
    reason: string | undefined,
    readonly opIndex: number,
    readonly opCodes: Array<ErrorCode | null>,
  ) {
    super(code, reason);
  }
}
