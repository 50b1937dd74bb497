import type { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type ErrorCode,
  type SessionEvent,
  type SessionListener,
  type SessionState,
  ZoottError,
} from '@zoott/core';
import { parseConnectString } from './connect-string.js';
import { ConnectVerdicts, verdictsError } from './connect-verdicts.js';
import { sessionHex } from './convert.js';
import type { ResolvedOptions } from './options.js';
import { describeRefusals, everyHostRefuses, type Refusal } from './refusal-probe.js';
import { installTransport } from './transport.js';
import { assertClientFixes } from './zk-wire/client-fixes.js';
import { CM_STATE, type LibClient, lib } from './zk-wire/client-lib.js';
import { boundHandshake } from './zk-wire/handshake.js';
import { installFastJute } from './zk-wire/jute-speed.js';
import { installKeepAlive } from './zk-wire/keep-alive.js';
import { installSaslHandshake } from './zk-wire/sasl-handshake.js';
import { installFastWire } from './zk-wire/wire.js';

/** Delay between rounds over all servers while reconnecting. */
const SPIN_DELAY_MS = 200;
/** How long close() waits for the server to confirm the end of the session. */
const CLOSE_WAIT_MS = 3000;
/** Shortest time a renewal gives the server to close the lost session (see closeStaleSession). */
const MIN_STALE_CLOSE_MS = 2000;

/**
 * The session state machine of one coordinator: the library client it drives, the states a
 * caller sees (`connecting`, `connected`, `suspended`, `lost`, `closed`) and their events. A
 * session that ends (lost or closed) hands the reason to `onEnd`, which fails what is in flight.
 */
export class ZkSession {
  /** The live library client; null before open, after loss and after close. */
  client: LibClient | null = null;
  private current: SessionState = 'connecting';
  sessionId: string | null = null;
  /** The timeout the server granted; the requested one until a connection says otherwise. */
  timeoutMs: number;
  /** Credentials of this coordinator: the options' plus every addAuth, replayed on renewal. */
  private readonly credentials: Array<{ scheme: string; auth: string }>;
  private readonly listeners = new Set<SessionListener>();
  private readonly stateWaiters = new Set<() => void>();
  private lostTimer: NodeJS.Timeout | null = null;
  /**
   * Counts sessions and renewal attempts: it moves on when a session is lost and when an open
   * starts. A call belongs to the generation it was issued in (request-pipeline.ts): it never
   * waits behind, nor is retried into, another one.
   */
  generation = 0;
  /**
   * The session this client called lost on its own (no connection for a whole timeout), which
   * the server may still hold: a restarted server restores its sessions with a fresh timeout,
   * and their ephemeral nodes (claims, registrations) with them. Closed by the next renewal.
   */
  private stale: { id: Buffer; password: Buffer } | null = null;
  /** lastReplyAt as far as clients before the live one heard it. */
  private heardBefore = 0;
  /** Why the server refused the SASL credentials, for the session's end. */
  private saslRefusal: string | null = null;

  constructor(
    private readonly connectString: string,
    private readonly opts: ResolvedOptions,
    private readonly onEnd: (code: ErrorCode, text: string) => void,
  ) {
    this.timeoutMs = opts.sessionTimeoutMs;
    this.credentials = [...opts.auth];
  }

  get state(): SessionState {
    return this.current;
  }

  /**
   * Wall time (ms) the server was last heard from on any connection of this coordinator (a
   * reply, a ping's answer, a notification), `null` before the first. What a process knows of
   * ZooKeeper's health without asking it: during an outage it stands still.
   */
  get lastReplyAt(): number | null {
    const at = Math.max(heardAt(this.client) ?? 0, this.heardBefore);
    return at > 0 ? Math.round(at) : null;
  }

  onSession(listener: SessionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Opens a session and resolves once connected; rejects with CONNECTION_LOSS on timeout. A
   * first open gives up early when every host refuses (a typo, a stopped server: the caller
   * wants to know now); a renewal (`renewing`) keeps trying for the whole connect timeout, so
   * it connects as soon as a server accepts again instead of between two tries of its caller.
   */
  async open(renewing = false): Promise<void> {
    // Before anything else: never run on a client library without zoott's fixes.
    assertClientFixes();
    this.generation++;
    this.current = 'connecting';
    const client = createLibClient(this.connectString, this.opts.sessionTimeoutMs);
    // Before connect(), the library only records credentials; it sends them first thing on
    // every (re)connection.
    for (const credential of this.credentials)
      client.addAuthInfo(credential.scheme, Buffer.from(credential.auth));
    client.on('state', (s: { name: string }) => this.onLibraryState(client, s.name));
    installFastJute();
    installFastWire(client);
    installKeepAlive(client);
    boundHandshake(client);
    // Failures no retry mends (a certificate refused, the wrong kind of port, a refused SASL
    // login) end the connect at once, while it lasts; later ones are connection losses.
    const hosts = parseConnectString(this.connectString).hosts;
    let diagnosing = true;
    const verdicts = new ConnectVerdicts(hosts, () => this.wakeWaiters());
    const current = installTransport(client, this.opts.tls, () =>
      diagnosing ? (server, v) => verdicts.record(server, v) : null,
    );
    this.saslRefusal = null;
    if (this.opts.sasl)
      installSaslHandshake(client, this.opts.sasl, (connectVerdict) => {
        this.saslRefusal = connectVerdict.text;
        const server = current();
        if (diagnosing && server) verdicts.record(server, connectVerdict);
      });
    this.client = client;
    client.connect();
    // Every host refusing is known within about a second; only silence needs the timeout.
    const probe = new AbortController();
    const verdict: { refused: Refusal[] | null } = { refused: null };
    if (!renewing)
      void everyHostRefuses(parseConnectString(this.connectString).hosts, probe.signal).then(
        (refusals) => {
          if (refusals === null || probe.signal.aborted) return;
          verdict.refused = refusals;
          this.wakeWaiters();
        },
      );
    const ok = await this.waitState(
      (s) => s !== 'connecting' || verdict.refused !== null || verdicts.conclusive() !== null,
      Date.now() + this.opts.connectTimeoutMs,
    ).finally(() => {
      probe.abort();
      diagnosing = false;
    });
    if (!ok || this.state !== 'connected') {
      if (this.client === client) this.client = null;
      this.keepHeard(client);
      abandon(client);
      if (this.current === 'connecting') this.current = 'lost';
      const hopeless = verdicts.conclusive();
      if (hopeless) throw verdictsError(this.connectString, hopeless);
      const why =
        verdict.refused !== null
          ? `could not connect to ${this.connectString}: every server refused the connection: ${describeRefusals(verdict.refused)}`
          : `could not connect to ${this.connectString} within ${this.opts.connectTimeoutMs} ms (${renewing ? 'no server took the session' : 'no server answered'})`;
      // Calls issued while this attempt was connecting went to its client, which is gone:
      // they fail now, instead of at their deadline.
      if (renewing && this.current === 'lost')
        this.onEnd('SESSION_EXPIRED', `the session is lost and renewing it failed: ${why}`);
      throw new ZoottError('CONNECTION_LOSS', why, { op: 'connect' });
    }
  }

  async renew(): Promise<void> {
    if (this.current === 'closed')
      throw new ZoottError('CLOSED', undefined, { op: 'renewSession' });
    if (this.current !== 'lost') return;
    await this.open(true);
  }

  async close(): Promise<void> {
    if (this.current === 'closed') return;
    this.clearLostTimer();
    const client = this.client;
    this.setState('closed');
    if (client) {
      // Requests already sent still get their replies: the server answers them before it
      // processes the close. The library sends closeSession only when connected.
      client.close();
      const deadline = Date.now() + CLOSE_WAIT_MS;
      while (client.connectionManager.state !== CM_STATE.CLOSED && Date.now() < deadline) {
        await sleep(10);
      }
      abandon(client);
    }
    this.client = null;
    this.sessionId = null;
    this.onEnd('CLOSED', 'the coordinator was closed before the reply came');
    this.emit('closed');
  }

  /** Adds credentials to the live client and keeps them for every renewed session. */
  addAuth(client: LibClient, scheme: string, auth: string): void {
    this.credentials.push({ scheme, auth });
    client.addAuthInfo(scheme, Buffer.from(auth));
  }

  /** Resolves true once `pred(state)` holds, false at the deadline. */
  async waitState(pred: (state: SessionState) => boolean, deadline: number): Promise<boolean> {
    while (!pred(this.current)) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.stateWaiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.stateWaiters.add(wake);
      });
    }
    return true;
  }

  private onLibraryState(client: LibClient, name: string): void {
    if (client !== this.client || this.current === 'closed') return;
    switch (name) {
      case 'SYNC_CONNECTED':
      case 'CONNECTED_READ_ONLY': {
        this.clearLostTimer();
        const stale = this.stale;
        if (stale !== null && this.current === 'connecting') {
          // A server is reachable again: end the session called lost before this one counts as
          // open, so no one sees its claims and registrations next to the new session's.
          this.stale = null;
          void closeStaleSession(this.connectString, stale, this.timeoutMs).then(() => {
            if (client === this.client && client.connectionManager.state === CM_STATE.CONNECTED)
              this.onLibraryState(client, name);
          });
          break;
        }
        const previous = this.current;
        this.sessionId = sessionHex(client.getSessionId());
        this.timeoutMs = client.getSessionTimeout();
        this.setState('connected');
        if (previous === 'connecting') this.emit('connected');
        else if (previous === 'suspended') this.emit('reconnected');
        break;
      }
      case 'DISCONNECTED':
        if (this.current === 'connected') {
          this.setState('suspended');
          this.startLostTimer();
          this.emit('suspended');
        }
        break;
      case 'EXPIRED':
        this.markLost('SESSION_EXPIRED', 'the server expired the session');
        break;
      case 'AUTH_FAILED':
        this.markLost(
          'AUTH_FAILED',
          this.saslRefusal ?? 'the server refused the credentials and ended the session',
        );
        break;
    }
  }

  /**
   * The library keeps reconnecting forever and, during a partition, never learns that the
   * server expired the session. As Curator does, call the session lost once a whole session
   * timeout has passed without a connection.
   */
  private startLostTimer(): void {
    this.lostTimer = setTimeout(() => {
      this.lostTimer = null;
      if (this.current === 'suspended') {
        const client = this.client;
        if (client)
          this.stale = { id: client.getSessionId(), password: client.getSessionPassword() };
        this.markLost(
          'SESSION_EXPIRED',
          `no connection for the whole session timeout (${this.timeoutMs} ms)`,
        );
      }
    }, this.timeoutMs);
    this.lostTimer.unref();
  }

  private markLost(code: ErrorCode, why: string): void {
    if (this.current === 'lost' || this.current === 'closed') return;
    this.clearLostTimer();
    const client = this.client;
    this.client = null;
    if (client) {
      this.keepHeard(client);
      abandon(client);
    }
    this.sessionId = null;
    this.generation++;
    this.setState('lost');
    this.onEnd(code, `session lost: ${why}`);
    this.emit('lost');
  }

  private setState(state: SessionState): void {
    this.current = state;
    this.wakeWaiters();
  }

  private wakeWaiters(): void {
    for (const wake of [...this.stateWaiters]) wake();
  }

  private emit(type: SessionEvent['type']): void {
    const event: SessionEvent = { type, sessionId: this.sessionId };
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        // A throwing listener must not break the client's state machine; surface it anyway.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  private keepHeard(client: LibClient): void {
    const heard = heardAt(client);
    if (heard !== null && heard > this.heardBefore) this.heardBefore = heard;
  }

  private clearLostTimer(): void {
    if (this.lostTimer) clearTimeout(this.lostTimer);
    this.lostTimer = null;
  }
}

/** Wall time a client last received bytes (wire.ts notes it), `null` if never. */
function heardAt(client: LibClient | null): number | null {
  const at = (client?.connectionManager as { heardAt?: number } | undefined)?.heardAt;
  return at === undefined ? null : performance.timeOrigin + at;
}

/** A library client for `connectString`, before any of the adapter's changes are installed. */
function createLibClient(
  connectString: string,
  sessionTimeoutMs: number,
  session?: { id: Buffer; password: Buffer },
): LibClient {
  return lib.createClient(connectString, {
    sessionTimeout: sessionTimeoutMs,
    spinDelay: SPIN_DELAY_MS,
    retries: 0,
    ...(session ? { sessionId: session.id, sessionPassword: session.password } : {}),
  });
}

/**
 * Ends a session on the server, if it still has it, by reattaching to it and closing it; its
 * ephemeral nodes go with it. Gives up after a handshake's time: a server that cannot be
 * reached now expires the session on its own.
 */
async function closeStaleSession(
  connectString: string,
  session: { id: Buffer; password: Buffer },
  sessionTimeoutMs: number,
): Promise<void> {
  const client = createLibClient(connectString, sessionTimeoutMs, session);
  boundHandshake(client);
  const deadline = Date.now() + Math.max(MIN_STALE_CLOSE_MS, sessionTimeoutMs / 3);
  const cm = client.connectionManager;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    client.on('state', (state: { name: string }) => {
      // Reattached: the server still had it. Its close is the last thing this client sends.
      if (state.name === 'SYNC_CONNECTED') client.close();
      else if (state.name === 'EXPIRED' || state.name === 'AUTH_FAILED') done();
    });
    (cm as unknown as EventEmitter).on('state', (state: number) => {
      if (state === CM_STATE.CLOSED) done();
    });
    client.connect();
  });
  abandon(client);
}

/** Stops a library client for good: no closeSession, no reconnect attempts. */
function abandon(client: LibClient): void {
  client.removeAllListeners('state');
  if (client.connectionManager.state !== CM_STATE.CLOSED) client.close();
  client.connectionManager.socket?.destroy();
}
