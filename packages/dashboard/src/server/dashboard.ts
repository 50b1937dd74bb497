import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  readRetention,
  type SessionEvent,
  type TaskKey,
  type TaskStateName,
  ZoottError,
} from '@zoott/core';
import { decodeKey, validateKey, validateWorldName } from '@zoott/core/internal';
import { loadAssets, pageHtml } from './assets.js';
import { checkAccess, checkWriteRequest } from './auth.js';
import { DashboardData } from './data.js';
import { readJsonBody, send, sendError, sendFailure, sendJson, startEventStream } from './http.js';
import { type LiveMessage, SLOT_MS, WorldHub } from './live.js';
import {
  type DashboardHandle,
  type DashboardOptions,
  type ResolvedOptions,
  resolveOptions,
} from './options.js';
import { pauseOrResume } from './pause.js';
import { dispatch, type RouteTable } from './routes.js';
import { scheduleData } from './schedules.js';

const STATES: readonly TaskStateName[] = ['pending', 'working', 'completed', 'failed'];
const PING_MS = 15_000;

/**
 * Starts the dashboard: one HTTP server holding the page, its bundled script and styles, a
 * JSON API and a server-sent event stream fed by the engine's events. Resolves once it
 * listens. Bad options throw INVALID_CONFIG before anything is bound; binding beyond
 * loopback without a token is refused.
 */
export async function startDashboard(options: DashboardOptions): Promise<DashboardHandle> {
  const opts = resolveOptions(options);
  const assets = loadAssets(opts.assetsDir);
  const app = new DashboardApp(opts, assets);
  return app.listen();
}

class DashboardApp {
  private readonly data: DashboardData;
  private readonly hubs = new Map<string, WorldHub>();
  private readonly streams = new Set<ServerResponse>();
  private readonly server = createServer((req, res) => void this.handle(req, res));
  private unsubscribeSession: () => void = () => {};
  private closed = false;
  /** The port bound (known once listening; `opts.port` may be 0). */
  private port = 0;

  constructor(
    private readonly opts: ResolvedOptions,
    private readonly assets: ReturnType<typeof loadAssets>,
  ) {
    this.data = new DashboardData(opts.coordinator, opts.logger);
  }

  async listen(): Promise<DashboardHandle> {
    const { host, port } = this.opts;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', (err) =>
        reject(
          new ZoottError('INVALID_CONFIG', `cannot listen on ${host}:${port}: ${err.message}`, {
            field: 'port',
            cause: err,
          }),
        ),
      );
      this.server.listen(port, host, () => resolve());
    });
    this.unsubscribeSession = this.opts.coordinator.onSession((e) => this.onSession(e));
    const bound = (this.server.address() as AddressInfo).port;
    this.port = bound;
    const shown = host.includes(':') ? `[${host}]` : host;
    const url = `http://${shown}:${bound}/`;
    const token = this.opts.token;
    return {
      url,
      token,
      openUrl: token === null ? url : `${url}?token=${encodeURIComponent(token)}`,
      host,
      port: bound,
      close: () => this.close(),
    };
  }

  private onSession(event: SessionEvent): void {
    this.broadcast({ event: 'status', data: { zookeeper: this.opts.coordinator.state } });
    if (event.type === 'lost') {
      // The dashboard holds no ephemeral nodes, so a new session loses nothing.
      this.opts.coordinator.renewSession().catch((err: unknown) => {
        this.opts.logger.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'dashboard: session renewal failed',
        );
      });
    }
    // After a mere reconnect the client re-arms its watches (SetWatches) and the server fires
    // any that changed meanwhile. A new session starts with none: restart every stream.
    if (event.type === 'connected') for (const hub of this.hubs.values()) hub.resync();
  }

  private broadcast(message: LiveMessage): void {
    for (const hub of this.hubs.values()) hub.emit(message);
  }

  private async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribeSession();
    for (const hub of this.hubs.values()) hub.close();
    this.hubs.clear();
    for (const stream of this.streams) stream.end();
    this.streams.clear();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private hub(world: string): WorldHub {
    let hub = this.hubs.get(world);
    if (!hub) {
      hub = new WorldHub(world, this.data, this.opts.logger);
      this.hubs.set(world, hub);
    }
    return hub;
  }

  /** The world a request names, else the configured one, else the first present. */
  private async world(url: URL): Promise<string> {
    const asked = url.searchParams.get('world');
    if (asked) return validateWorldName(asked);
    if (this.opts.world) return this.opts.world;
    const [first] = await this.data.worlds();
    if (!first)
      throw new ZoottError(
        'WORLD_NOT_INITIALISED',
        'no world is initialised in this namespace yet',
        {
          field: 'world',
        },
      );
    return first;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://dashboard.invalid');
    } catch {
      return sendError(res, 400, 'BAD_ARGUMENTS', 'bad request URL');
    }
    const refused = checkAccess(req, url, this.opts.token);
    if (refused) {
      if (refused.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
      return sendError(res, refused.status, 'NO_AUTH', refused.message);
    }
    try {
      await dispatch(this.routes, req, res, url);
    } catch (err) {
      if (res.headersSent) res.end();
      else sendFailure(res, err);
    }
  }

  /** What the server answers: the page and its assets, the JSON API, the live stream. */
  private readonly routes: RouteTable = {
    '/': { GET: async (_req, res) => this.page(res) },
    '/index.html': { GET: async (_req, res) => this.page(res) },
    '/assets/app.js': {
      GET: async (_req, res) =>
        send(res, 200, this.assets.js, 'text/javascript; charset=utf-8', 'private, max-age=86400'),
    },
    '/assets/app.css': {
      GET: async (_req, res) =>
        send(res, 200, this.assets.css, 'text/css; charset=utf-8', 'private, max-age=86400'),
    },
    '/api/config': {
      GET: async (_req, res) => {
        const worlds = await this.data.worlds();
        sendJson(res, 200, {
          readOnly: this.opts.readOnly,
          world: this.opts.world ?? worlds[0] ?? null,
          worlds,
          zookeeper: this.opts.coordinator.state,
        });
      },
    },
    '/api/worlds': { GET: async (_req, res) => sendJson(res, 200, await this.data.worlds()) },
    '/api/overview': { GET: async (_req, res, url) => this.overview(res, url) },
    '/api/counts': {
      GET: async (_req, res, url) =>
        sendJson(res, 200, await this.data.counts(await this.world(url))),
    },
    '/api/list': { GET: async (_req, res, url) => this.list(res, url) },
    '/api/tree': {
      GET: async (_req, res, url) => {
        const world = await this.world(url);
        const root = url.searchParams.get('root');
        sendJson(res, 200, await this.data.tree(world, root ? decodeKey(root) : undefined));
      },
    },
    '/api/task': {
      GET: async (_req, res, url) => {
        const world = await this.world(url);
        const key = decodeKey(requiredParam(url, 'key'));
        // With what the task reported (ctx.progress / ctx.log, a job's fd 3), or null.
        const [rec, report] = await Promise.all([
          this.data.task(world, key),
          this.data.engine(world).progress(key),
        ]);
        if (!rec)
          return sendError(res, 404, 'NO_SUCH_TASK', `task ${key.join('|')} does not exist`);
        sendJson(res, 200, { ...rec, report });
      },
    },
    '/api/failed': {
      GET: async (_req, res, url) =>
        sendJson(res, 200, await this.data.failed(await this.world(url))),
    },
    '/api/workers': {
      GET: async (_req, res, url) =>
        sendJson(res, 200, await this.data.workers(await this.world(url))),
    },
    '/api/schedules': {
      GET: async (_req, res, url) => {
        const world = await this.world(url);
        sendJson(
          res,
          200,
          await scheduleData(this.data.engine(world), () => this.data.workers(world)),
        );
      },
    },
    '/api/events': { GET: async (req, res, url) => this.stream(req, res, await this.world(url)) },
    '/api/retry': {
      POST: async (req, res, url) =>
        this.change(req, res, url, async (world, body) => {
          const key = bodyKey(body);
          await this.data.retry(world, key);
          return { key };
        }),
    },
    '/api/retry-all': {
      POST: async (req, res, url) =>
        this.change(req, res, url, (world) => this.data.retryAll(world)),
    },
    '/api/cancel': {
      POST: async (req, res, url) =>
        this.change(req, res, url, async (world, body) => ({
          cancelled: await this.data.cancel(world, bodyKey(body), body.subtree === true),
        })),
    },
    '/api/pause': {
      POST: async (req, res, url) =>
        this.change(req, res, url, async (world, body) => ({
          paused: await pauseOrResume(this.data.engine(world), true, body),
        })),
    },
    '/api/resume': {
      POST: async (req, res, url) =>
        this.change(req, res, url, async (world, body) => ({
          paused: await pauseOrResume(this.data.engine(world), false, body),
        })),
    },
  };

  private page(res: ServerResponse): void {
    send(
      res,
      200,
      pageHtml({
        token: this.opts.token,
        readOnly: this.opts.readOnly,
        world: this.opts.world,
        version: this.assets.version,
      }),
      'text/html; charset=utf-8',
    );
  }

  private async overview(res: ServerResponse, url: URL): Promise<void> {
    const data = this.data;
    const world = await this.world(url);
    const [counts, oldest, worlds, workers, kept, paused] = await Promise.all([
      data.counts(world),
      data.oldestPending(world),
      data.worlds(),
      data.workers(world),
      // What the world keeps: the settings stored in it, the ones its reaper follows.
      readRetention(this.opts.coordinator, world),
      data.engine(world).pauseState(),
    ]);
    // Throughput is counted from the live stream, started once the world is known to exist.
    const hub = this.hub(world);
    const now = Date.now();
    sendJson(res, 200, {
      world,
      worlds,
      counts,
      oldestPending: oldest && { ...oldest, ageMs: Math.max(0, now - oldest.since) },
      workers: workers.length,
      retention: kept.settings,
      paused,
      throughput: { slotMs: SLOT_MS, slots: hub.throughput(now) },
      zookeeper: this.opts.coordinator.state,
      now,
    });
  }

  private async list(res: ServerResponse, url: URL): Promise<void> {
    const state = url.searchParams.get('state');
    if (state !== null && !STATES.includes(state as TaskStateName))
      throw new ZoottError(
        'BAD_ARGUMENTS',
        `state ${JSON.stringify(state)}: must be one of ${STATES.join(', ')}`,
        { field: 'state' },
      );
    const world = await this.world(url);
    sendJson(res, 200, await this.data.engine(world).list((state as TaskStateName) ?? undefined));
  }

  /**
   * An operator action (retry, cancel): refused when read-only or not a same-origin JSON
   * request, then run on the world the body names (else the usual one).
   */
  private async change(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    run: (world: string, body: Record<string, unknown>) => Promise<object>,
  ): Promise<void> {
    if (this.opts.readOnly)
      return sendError(res, 403, 'NO_AUTH', 'the dashboard is read-only (--read-only)');
    const refused = checkWriteRequest(req);
    if (refused) return sendError(res, refused.status, 'NO_AUTH', refused.message);
    const body = await readJsonBody(req);
    const world =
      typeof body.world === 'string' ? validateWorldName(body.world) : await this.world(url);
    sendJson(res, 200, { ok: true, world, ...(await run(world, body)) });
  }

  /** Server-sent events of one world: task changes, registry changes, connection status. */
  private async stream(req: IncomingMessage, res: ServerResponse, world: string): Promise<void> {
    await this.data.engine(world).context();
    const hub = this.hub(world);
    await hub.ready;
    if (this.closed) return sendError(res, 503, 'CLOSED', 'the dashboard is closing');
    startEventStream(res);
    this.streams.add(res);
    const write = (message: LiveMessage) => {
      res.write(`event: ${message.event}\ndata: ${JSON.stringify(message.data)}\n\n`);
    };
    write({ event: 'status', data: { zookeeper: this.opts.coordinator.state } });
    res.write(`event: hello\ndata: ${JSON.stringify({ world, readOnly: this.opts.readOnly })}\n\n`);
    const off = hub.subscribe(write);
    // A comment now and then keeps proxies and idle timeouts from cutting a quiet stream.
    const ping = setInterval(() => res.write(': ping\n\n'), PING_MS);
    const end = () => {
      clearInterval(ping);
      off();
      this.streams.delete(res);
    };
    req.on('close', end);
    res.on('error', end);
  }
}

function requiredParam(url: URL, name: string): string {
  const value = url.searchParams.get(name);
  if (!value)
    throw new ZoottError('BAD_ARGUMENTS', `query parameter ${name} is required`, { field: name });
  return value;
}

/** A key in a JSON body: an array of names or the `a|b|c` form. */
function bodyKey(body: Record<string, unknown>): TaskKey {
  const key = body.key;
  if (typeof key === 'string' && key !== '') return decodeKey(key);
  if (Array.isArray(key)) return validateKey(key);
  throw new ZoottError('BAD_ARGUMENTS', 'key: give the task key as ["a","b"] or "a|b"', {
    field: 'key',
  });
}
