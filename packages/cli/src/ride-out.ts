import { type Coordinator, isZoottError } from '@zoott/core';

/** Failures that only mean ZooKeeper is out of reach for now, or the session must be renewed. */
const PASSING = new Set(['CONNECTION_LOSS', 'OPERATION_TIMEOUT', 'SESSION_EXPIRED']);

/** Whether a failure only means ZooKeeper is out of reach for now. */
export function isPassing(err: unknown): boolean {
  return isZoottError(err) && PASSING.has(err.code);
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * Keeps a long-running command's session usable through a ZooKeeper outage: when the session
 * is lost (the outage outlived the session timeout), renews it, again and again with a
 * growing pause, until it works or `signal` aborts. Tells `note` when the connection drops
 * and when it is back. Returns the function that stops it.
 */
export function keepSession(
  coordinator: Coordinator,
  signal: AbortSignal,
  note: (text: string) => void,
): () => void {
  let renewing = false;
  let away = false;
  const renew = async () => {
    if (renewing) return;
    renewing = true;
    try {
      let pause = 250;
      while (coordinator.state === 'lost' && !signal.aborted) {
        try {
          await coordinator.renewSession();
        } catch {
          await sleep(pause, signal);
          pause = Math.min(pause * 2, 2000);
        }
      }
    } finally {
      renewing = false;
    }
  };
  const off = coordinator.onSession((event) => {
    if (event.type === 'suspended' || event.type === 'lost') {
      if (!away) note('lost the connection to ZooKeeper; waiting for it to come back...');
      away = true;
    }
    if (event.type === 'lost') void renew();
    if ((event.type === 'connected' || event.type === 'reconnected') && away) {
      away = false;
      note(
        event.type === 'connected'
          ? 'connected to ZooKeeper again (new session)'
          : 'connected to ZooKeeper again',
      );
    }
  });
  return off;
}

/**
 * Resolves `true` once requests flow again (state `connected`), `false` when `signal`
 * aborts or the session was closed.
 */
export function untilConnected(coordinator: Coordinator, signal: AbortSignal): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const check = () => {
      const state = coordinator.state;
      if (state === 'connected') return finish(true);
      if (state === 'closed' || signal.aborted) return finish(false);
    };
    const finish = (value: boolean) => {
      off();
      signal.removeEventListener('abort', check);
      resolve(value);
    };
    const off = coordinator.onSession(check);
    signal.addEventListener('abort', check, { once: true });
    // The state may have changed before the listener was in place.
    queueMicrotask(check);
  });
}

/**
 * Runs `fn` until it gets through: a failure that only means ZooKeeper is away waits for
 * the connection (renewed by {@link keepSession}) and tries again. Anything else, and any
 * failure once `signal` aborted, is thrown.
 */
export async function throughOutages<T>(
  coordinator: Coordinator,
  signal: AbortSignal,
  fn: () => Promise<T>,
): Promise<T> {
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!isPassing(err) || signal.aborted) throw err;
      if (!(await untilConnected(coordinator, signal))) throw err;
      // Connected may be stale news for a request that just timed out: do not spin.
      await sleep(100, signal);
    }
  }
}

/** A signal that aborts with `parent` or after `ms` (never when `ms` is infinite). */
export function withDeadline(
  parent: AbortSignal,
  ms: number,
): { signal: AbortSignal; dispose: () => void } {
  const ctl = new AbortController();
  const abort = () => ctl.abort();
  parent.addEventListener('abort', abort, { once: true });
  if (parent.aborted) ctl.abort();
  const timer = Number.isFinite(ms)
    ? setTimeout(abort, Math.max(0, Math.min(ms, 2 ** 31 - 1)))
    : undefined;
  return {
    signal: ctl.signal,
    dispose: () => {
      clearTimeout(timer);
      parent.removeEventListener('abort', abort);
    },
  };
}
