import { setTimeout as sleep } from 'node:timers/promises';
import {
  type ErrorCode,
  type SessionEvent,
  type SessionListener,
  type SessionState,
  ZoottError,
} from '@zoott/core';
import { assertClientFixes } from './client-fixes.js';
import { CM_STATE, type LibClient, lib } from './client-lib.js';
import { parseConnectString } from './connect-string.js';
import { ConnectVerdicts, verdictsError } from './connect-verdicts.js';
import { sessionHex } from './convert.js';
import { boundHandshake } from './handshake.js';
import { installFastJute } from './jute-speed.js';
import type { ResolvedOptions } from './options.js';
import { describeRefusals, everyHostRefuses, type Refusal } from './refusal-probe.js';
import { installSaslHandshake } from './sasl-handshake.js';
import { installTransport } from './transport.js';
import { installFastWire } from './wire.js';

/** Delay between rounds over all servers while reconnecting. */
const SPIN_DELAY_MS = 200;
/** How long close() waits for the server to confirm the end of the session. */
const CLOSE_WAIT_MS = 3000;

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

  onSession(listener: SessionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Opens a session and resolves once connected; rejects with CONNECTION_LOSS on timeout. */
  async open(): Promise<void> {
    // Before anything else: never run on a client library without zoott's fixes.
    assertClientFixes();
    this.current = 'connecting';
    const client = lib.createClient(this.connectString, {
      sessionTimeout: this.opts.sessionTimeoutMs,
      spinDelay: SPIN_DELAY_MS,
      retries: 0,
    });
    // Before connect(), the library only records credentials; it sends them first thing on
    // every (re)connection.
    for (const c of this.credentials) client.addAuthInfo(c.scheme, Buffer.from(c.auth));
    client.on('state', (s: { name: string }) => this.onLibraryState(client, s.name));
    installFastJute();
    installFastWire(client);
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
      installSaslHandshake(client, this.opts.sasl, (v) => {
        this.saslRefusal = v.text;
        const server = current();
        if (diagnosing && server) verdicts.record(server, v);
      });
    this.client = client;
    client.connect();
    // Every host refusing is known within about a second; only silence needs the timeout.
    const probe = new AbortController();
    const verdict: { refused: Refusal[] | null } = { refused: null };
    void everyHostRefuses(parseConnectString(this.connectString).hosts, probe.signal).then((r) => {
      if (r === null || probe.signal.aborted) return;
      verdict.refused = r;
      this.wakeWaiters();
    });
    const ok = await this.waitState(
      (s) => s !== 'connecting' || verdict.refused !== null || verdicts.conclusive() !== null,
      Date.now() + this.opts.connectTimeoutMs,
    ).finally(() => {
      probe.abort();
      diagnosing = false;
    });
    if (!ok || this.state !== 'connected') {
      if (this.client === client) this.client = null;
      abandon(client);
      if (this.current === 'connecting') this.current = 'lost';
      const hopeless = verdicts.conclusive();
      if (hopeless) throw verdictsError(this.connectString, hopeless);
      throw new ZoottError(
        'CONNECTION_LOSS',
        verdict.refused !== null
          ? `could not connect to ${this.connectString}: every server refused the connection: ${describeRefusals(verdict.refused)}`
          : `could not connect to ${this.connectString} within ${this.opts.connectTimeoutMs} ms (no server answered)`,
        { op: 'connect' },
      );
    }
  }

  async renew(): Promise<void> {
    if (this.current === 'closed')
      throw new ZoottError('CLOSED', undefined, { op: 'renewSession' });
    if (this.current !== 'lost') return;
    await this.open();
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
  async waitState(pred: (s: SessionState) => boolean, deadline: number): Promise<boolean> {
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
    if (client) abandon(client);
    this.sessionId = null;
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

  private clearLostTimer(): void {
    if (this.lostTimer) clearTimeout(this.lostTimer);
    this.lostTimer = null;
  }
}

/** Stops a library client for good: no closeSession, no reconnect attempts. */
function abandon(client: LibClient): void {
  client.removeAllListeners('state');
  if (client.connectionManager.state !== CM_STATE.CLOSED) client.close();
  client.connectionManager.socket?.destroy();
}
