import type {
  Coordinator,
  ErrorCode,
  SessionEvent,
  SessionEventType,
  WatchEvent,
  Watcher,
  ZoottError,
} from '@zoott/core';
import { expect } from 'vitest';
import type { CoordinatorHarness } from './harness.js';

/** The digest user every ACL test grants ALL, so teardown can always clean up. */
export const ADMIN_USER = 'conf-admin';
/** The password of `ADMIN_USER`. */
export const ADMIN_PASSWORD = 'conf-secret';

/** What each test gets: a fresh base path and clients that are closed after it. */
export interface SuiteContext {
  readonly harness: CoordinatorHarness;
  /** `/conf-<random>`, created before the test, deleted (recursively) after it. */
  readonly base: string;
  /** The first client, connected before the test. */
  readonly client: Coordinator;
  /** `base` joined with the given segments. */
  path(...segments: string[]): string;
  /** Opens another session on the same tree; closed after the test. */
  connect(options?: { sessionTimeoutMs?: number }): Promise<Coordinator>;
  /** Deadline for things that must happen. */
  readonly timeoutMs: number;
}

function randomSuffix(): string {
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

/** Builds and tears down the per-test context. */
export class ContextManager {
  private clients: Coordinator[] = [];
  private current: SuiteContext | undefined;

  async setUp(harness: CoordinatorHarness): Promise<SuiteContext> {
    this.clients = [];
    const connect = async (options?: { sessionTimeoutMs?: number }) => {
      const coordinator = await harness.connect(options);
      this.clients.push(coordinator);
      return coordinator;
    };
    const client = await connect();
    const base = `/conf-${randomSuffix()}`;
    await client.create(base);
    this.current = {
      harness,
      base,
      client,
      connect,
      timeoutMs: harness.eventTimeoutMs ?? 10_000,
      path: (...segments) => [base, ...segments].join('/'),
    };
    return this.current;
  }

  get context(): SuiteContext {
    if (!this.current) throw new Error('conformance: no test context (used outside a test?)');
    return this.current;
  }

  /** Closes every client, then removes the base tree with a fresh, fully authorised session. */
  async tearDown(): Promise<void> {
    const ctx = this.current;
    this.current = undefined;
    const clients = this.clients;
    this.clients = [];
    await Promise.allSettled(clients.map((c) => c.close()));
    if (!ctx) return;
    const cleaner = await ctx.harness.connect();
    try {
      await cleaner.addAuth('digest', `${ADMIN_USER}:${ADMIN_PASSWORD}`);
      await removeTree(cleaner, ctx.base);
    } finally {
      await cleaner.close();
    }
  }
}

/**
 * Whether `err` is the contract's error: an Error named `ZoottError` with a string `code`.
 * Checked by shape, because the suite uses core's types only: it must not judge an adapter
 * with core's own code.
 */
function isCoordinatorError(err: unknown): err is ZoottError {
  return (
    err instanceof Error &&
    err.name === 'ZoottError' &&
    'code' in err &&
    typeof err.code === 'string'
  );
}

/** `err` is the contract's NO_NODE error. */
function isNoNode(err: unknown): boolean {
  return isCoordinatorError(err) && err.code === 'NO_NODE';
}

/** Deletes `path` and everything below it, deepest first; nodes already gone are fine. */
async function removeTree(client: Coordinator, path: string): Promise<void> {
  let children: string[];
  try {
    children = await client.children(path);
  } catch (err) {
    if (isNoNode(err)) return;
    throw err;
  }
  await Promise.all(children.map((name) => removeTree(client, `${path}/${name}`)));
  try {
    await client.delete(path);
  } catch (err) {
    if (!isNoNode(err)) throw err;
  }
}

/** Asserts that `promise` rejects with a ZoottError whose code is one of `codes`; returns it. */
export async function expectCode(
  promise: Promise<unknown>,
  codes: ErrorCode | readonly ErrorCode[],
): Promise<ZoottError> {
  const wanted = typeof codes === 'string' ? [codes] : codes;
  let outcome: unknown;
  try {
    outcome = await promise;
  } catch (err) {
    if (!isCoordinatorError(err)) {
      throw new Error(`expected a ZoottError (${wanted.join(' | ')}), got ${String(err)}`);
    }
    expect(wanted, `error was: ${err.message}`).toContain(err.code);
    return err;
  }
  throw new Error(
    `expected a ZoottError (${wanted.join(' | ')}), but it resolved with ${JSON.stringify(outcome)}`,
  );
}

function waitUntil<T>(
  check: () => T | undefined,
  subscribe: (wake: () => void) => void,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const ready = check();
  if (ready !== undefined) return Promise.resolve(ready);
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`conformance: no ${what} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    subscribe(() => {
      const value = check();
      if (value !== undefined) {
        clearTimeout(timer);
        resolve(value);
      }
    });
  });
}

/** A watcher that records what it sees, and lets a test wait for the n-th event. */
export interface WatchRecorder {
  readonly watch: Watcher;
  readonly events: WatchEvent[];
  /** Resolves with the event number `nth` (1-based, default 1) once it arrived. */
  next(nth?: number): Promise<WatchEvent>;
}

/** Events in arrival order, and a way to wait for the n-th. */
export interface EventLog<T> {
  readonly events: T[];
  push(event: T): void;
  /** Resolves with event number `nth` (1-based, default 1) once it arrived. */
  next(nth?: number): Promise<T>;
}

/** An {@link EventLog} whose `next(n)` fails after `timeoutMs` without the n-th event. */
export function eventLog<T>(timeoutMs: number, what: string): EventLog<T> {
  const events: T[] = [];
  const wakers = new Set<() => void>();
  return {
    events,
    push(event) {
      events.push(event);
      for (const wake of [...wakers]) wake();
    },
    next(nth = 1) {
      return waitUntil(
        () => events[nth - 1],
        (wake) => wakers.add(wake),
        timeoutMs,
        `${what} #${nth}`,
      );
    },
  };
}

/** A watcher that records its events; `next(n)` fails after `timeoutMs` without the n-th. */
export function recorder(timeoutMs: number, log?: string[], label?: string): WatchRecorder {
  const events = eventLog<WatchEvent>(timeoutMs, 'watch event');
  return {
    events: events.events,
    watch: (event) => {
      log?.push(`${label ?? 'watch'}:${event.type}:${event.path}`);
      events.push(event);
    },
    next: (n) => events.next(n),
  };
}

/** Records a client's session events from now on. */
export interface SessionRecorder {
  readonly events: SessionEvent[];
  /** Resolves with the first recorded event of this type. */
  waitFor(type: SessionEventType): Promise<SessionEvent>;
  stop(): void;
}

/** Records `client`'s session events; `waitFor(type)` fails after `timeoutMs`. */
export function sessionRecorder(client: Coordinator, timeoutMs: number): SessionRecorder {
  const events: SessionEvent[] = [];
  const wakers = new Set<() => void>();
  const stop = client.onSession((event) => {
    events.push(event);
    for (const wake of [...wakers]) wake();
  });
  return {
    events,
    stop,
    waitFor(type) {
      return waitUntil(
        () => events.find((e) => e.type === type),
        (wake) => wakers.add(wake),
        timeoutMs,
        `'${type}' session event`,
      );
    },
  };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
export const text = (s: string): Uint8Array => encoder.encode(s);
export const str = (b: Uint8Array): string => decoder.decode(b);
export const sorted = (names: readonly string[]): string[] => [...names].sort();
