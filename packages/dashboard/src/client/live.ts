import { apiUrl, type EngineEvent } from './api.js';

export interface LiveStatus {
  /** The event stream: `live` once the server said hello. */
  stream: 'connecting' | 'live' | 'reconnecting';
  /** The server's ZooKeeper session state (`connected`, `suspended`, `lost`, ...). */
  zookeeper: string;
}

export interface LiveHandlers {
  task(event: EngineEvent & { at: number }): void;
  workers(): void;
  /** Events may have been missed (new stream, restarted watches): re-read everything. */
  resync(): void;
  status(liveStatus: LiveStatus): void;
}

const RECONNECT_MS = 1500;
/** The server pings every 15 s; a stream silent for longer is dead even if the socket is not. */
const SILENCE_MS = 40_000;

/**
 * The live stream of one world over server-sent events. EventSource reconnects by itself
 * after a network drop; after an HTTP error it gives up, so this opens a new one.
 */
export class LiveConnection {
  private es: EventSource | null = null;
  private status: LiveStatus = { stream: 'connecting', zookeeper: 'unknown' };
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private silenceTimer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  constructor(
    private readonly world: string,
    private readonly on: LiveHandlers,
  ) {
    this.open();
  }

  private setStatus(patch: Partial<LiveStatus>): void {
    this.status = { ...this.status, ...patch };
    this.on.status(this.status);
  }

  private open(): void {
    if (this.closed) return;
    const es = new EventSource(apiUrl('/api/events', { world: this.world }, true));
    this.es = es;
    this.heard();
    es.addEventListener('hello', () => {
      this.heard();
      this.setStatus({ stream: 'live' });
      this.on.resync();
    });
    es.addEventListener('task', (message) => {
      this.heard();
      this.on.task(JSON.parse((message as MessageEvent<string>).data));
    });
    es.addEventListener('workers', () => {
      this.heard();
      this.on.workers();
    });
    es.addEventListener('resync', () => {
      this.heard();
      this.on.resync();
    });
    es.addEventListener('status', (message) => {
      this.heard();
      this.setStatus({ zookeeper: JSON.parse((message as MessageEvent<string>).data).zookeeper });
    });
    es.onmessage = () => this.heard();
    es.onerror = () => {
      this.setStatus({ stream: 'reconnecting' });
      if (es.readyState === EventSource.CLOSED) this.reopenLater();
    };
  }

  private heard(): void {
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(() => {
      this.setStatus({ stream: 'reconnecting' });
      this.es?.close();
      this.reopenLater();
    }, SILENCE_MS);
  }

  private reopenLater(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.es?.close();
      this.open();
    }, RECONNECT_MS);
  }

  close(): void {
    this.closed = true;
    this.es?.close();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
  }
}
