import type { Coordinator, SessionState } from '@zoott/core';

/**
 * Where a worker daemon stands, as `/healthz` tells it:
 * - `serving`: the session is connected and the worker is registered: it claims work;
 * - `registering`: connected, not registered yet (starting, or just after a renewal);
 * - `suspended`: the connection dropped; the session may live on, nothing new is claimed;
 * - `lost`: the session is gone (running tasks were aborted, their results dropped);
 * - `renewing`: connecting again after a loss;
 * - `connecting`: not connected yet for the first time;
 * - `closed`: the session was closed (the daemon is stopping).
 */
export type ServingState =
  | 'serving'
  | 'registering'
  | 'suspended'
  | 'lost'
  | 'renewing'
  | 'connecting'
  | 'closed';

/** What `/healthz` reports: healthy (200) only while `serving`. */
export interface Health {
  healthy: boolean;
  state: ServingState;
  /** The coordinator's session state. */
  session: SessionState;
  /** Milliseconds since ZooKeeper was last heard from; `null` when the coordinator cannot tell. */
  lastReplyAgeMs: number | null;
}

/** When the coordinator last heard from its server, if it knows (the ZooKeeper adapter does). */
export function lastReplyAt(coordinator: Coordinator): number | null {
  const at = (coordinator as { lastReplyAt?: unknown }).lastReplyAt;
  return typeof at === 'number' ? at : null;
}

/**
 * Follows a daemon's session and registration and answers what `/healthz` says, from what
 * the process knows: no request to ZooKeeper.
 */
export class HealthWatch {
  /** A session was lost and no new one has connected since. */
  private afterLoss = false;
  private readonly off: () => void;

  constructor(
    private readonly coordinator: Coordinator,
    /** Whether the worker is registered (its main loop's registry node exists). */
    private readonly registered: () => boolean,
    private readonly now: () => number = Date.now,
  ) {
    this.off = coordinator.onSession((event) => {
      if (event.type === 'lost') this.afterLoss = true;
      else if (event.type === 'connected') this.afterLoss = false;
    });
  }

  health(): Health {
    const session = this.coordinator.state;
    const state = this.state(session);
    const at = lastReplyAt(this.coordinator);
    return {
      healthy: state === 'serving',
      state,
      session,
      lastReplyAgeMs: at === null ? null : Math.max(0, this.now() - at),
    };
  }

  close(): void {
    this.off();
  }

  private state(session: SessionState): ServingState {
    switch (session) {
      case 'connected':
        return this.registered() ? 'serving' : 'registering';
      case 'connecting':
        return this.afterLoss ? 'renewing' : 'connecting';
      default:
        return session;
    }
  }
}
