import {
  addSchedule,
  type Coordinator,
  createEngine,
  DEFAULT_RETENTION,
  type Engine,
  removeRateLimit,
  removeSchedule,
  runWorker,
  setRateLimit,
  utf8,
  type WorkerHandle,
} from '@zoott/core';
import { internalWorldName } from '@zoott/core/internal';
import { type DashboardHandle, startDashboard } from '@zoott/dashboard';
import { killSession, type ZkCoordinator } from '@zoott/zk-adapter';
import { startProxy, type ZkProxy } from '@zoott/zk-testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  assetsForFile,
  eventually,
  openEventStream,
  statusForForeignHost,
  taskEvent,
  zkNamespace,
} from './helpers.js';

const WORLD = 'api';
const quiet = { warn: () => {} };

/** The token of the dashboard under test, sent as a Bearer header by `call` when set. */
let bearer: string | null = null;

/** GET/POST against the dashboard, JSON both ways. */
async function call(base: string, path: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  if (bearer && !headers.has('Authorization')) headers.set('Authorization', `Bearer ${bearer}`);
  const res = await fetch(new URL(path, base), { ...init, headers });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}
const post = (base: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(base, path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

/** The page bundle, built once per file from the current source. */
const assetsDir = assetsForFile();

describe('dashboard JSON API and live stream [zookeeper]', () => {
  let ns: Awaited<ReturnType<typeof zkNamespace>>;
  let engine: Engine;
  let dash: DashboardHandle;
  let dashClient: Coordinator;
  let proxy: ZkProxy;
  let worker: WorkerHandle;
  let failing = true;

  beforeAll(async () => {
    ns = await zkNamespace(inject('zkConnect'));
    engine = createEngine(await ns.connect(), { world: WORLD, buckets: 4, logger: quiet });
    await engine.init();
    // An internal world (race coordination) exists beside it: never listed as a world.
    await createEngine(await ns.connect(), {
      world: internalWorldName(WORLD, 'races'),
      buckets: 2,
      logger: quiet,
    }).init();
    await engine.queue({ name: 'root', type: 'parent' });
    await engine.queue({ name: 'leaf', type: 'child', data: { n: 1 } }, { key: ['root'] });
    await engine.queue({ name: 'flaky', type: 'flaky' }, null, null, { maxAttempts: 1 });
    worker = runWorker(
      await ns.connect(),
      {
        parent: () => 'parent done',
        child: (t) => ({ doubled: (t.data as { n: number }).n * 2 }),
        flaky: () => {
          if (failing) throw new Error('flaky broke');
          return 'fixed';
        },
      },
      { world: WORLD, id: 'w-api', host: 'api-host', stealAfterMs: 50, pollMs: 300, logger: quiet },
    );
    await eventually(async () => {
      const c = await engine.counts();
      return c.completed === 2 && c.failed === 1 ? true : undefined;
    });
    // The dashboard's own client goes through a proxy, so the test can cut its connection.
    proxy = await startProxy(inject('zkConnect'));
    dashClient = await ns.connect(proxy.hostPort);
    dash = await startDashboard({
      assetsDir: assetsDir(),
      coordinator: dashClient,
      port: 0,
      logger: quiet,
    });
    // On loopback too, a random token guards every route unless noToken is asked for.
    expect(dash.token).toMatch(/^[\w-]{24}$/);
    bearer = dash.token;
  });

  afterAll(async () => {
    bearer = null;
    await dash?.close();
    await worker?.stop();
    await ns?.close();
    await proxy?.close();
  });

  it('serves counts, lists, the tree, tasks, workers and failed records', async () => {
    expect((await call(dash.url, '/api/config')).body).toMatchObject({
      readOnly: false,
      world: WORLD,
      worlds: [WORLD],
    });
    expect((await call(dash.url, '/api/worlds')).body).toEqual([WORLD]);
    expect((await call(dash.url, '/api/counts')).body).toEqual({
      pending: 0,
      working: 0,
      completed: 2,
      failed: 1,
    });
    const completed = (await call(dash.url, `/api/list?world=${WORLD}&state=completed`)).body;
    expect(completed.map((t: { key: string[] }) => t.key.join('|')).sort()).toEqual([
      'root',
      'root|leaf',
    ]);
    const tree = (await call(dash.url, '/api/tree')).body;
    expect(tree).toMatchObject([
      { name: 'flaky', state: 'failed' },
      {
        name: 'root',
        type: 'parent',
        state: 'completed',
        children: [{ name: 'leaf', type: 'child', state: 'completed' }],
      },
    ]);
    const sub = (await call(dash.url, '/api/tree?root=root')).body;
    expect(sub).toMatchObject([{ key: ['root', 'leaf'] }]);
    const leaf = await call(dash.url, `/api/task?key=${encodeURIComponent('root|leaf')}`);
    expect(leaf.body).toMatchObject({
      state: 'completed',
      data: { n: 1 },
      result: { doubled: 2 },
      worker: { worker: 'w-api' },
    });
    const workers = (await call(dash.url, '/api/workers')).body;
    expect(workers).toHaveLength(1);
    expect(workers[0]).toMatchObject({ id: 'w-api', host: 'api-host', running: [] });
    expect(workers[0].types.sort()).toEqual(['child', 'flaky', 'parent']);
    expect(workers[0].session).toMatch(/^[0-9a-f]{16}$/);
    const failed = (await call(dash.url, '/api/failed')).body;
    expect(failed.total).toBe(1);
    expect(failed.tasks[0]).toMatchObject({ key: ['flaky'], error: { message: 'flaky broke' } });
    const overview = (await call(dash.url, '/api/overview')).body;
    expect(overview).toMatchObject({
      world: WORLD,
      counts: { completed: 2 },
      workers: 1,
      oldestPending: null,
      retention: DEFAULT_RETENTION,
    });
    expect(overview.throughput.slots).toHaveLength(30);
  });

  it('answers bad requests with a clear error and status', async () => {
    const missing = await call(dash.url, '/api/task?key=nope');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NO_SUCH_TASK');
    const badState = await call(dash.url, '/api/list?state=done');
    expect(badState.status).toBe(400);
    expect(badState.body.error.message).toContain('state "done"');
    const badKey = await call(dash.url, `/api/task?key=${encodeURIComponent('a||b')}`);
    expect(badKey.status).toBe(400);
    const noWorld = await call(dash.url, '/api/counts?world=nowhere');
    expect(noWorld.status).toBe(404);
    expect(noWorld.body.error.message).toContain('nowhere');
    const notFailed = await post(dash.url, '/api/retry', { key: ['root'] });
    expect(notFailed.status).toBe(409);
    expect(notFailed.body.error.code).toBe('TASK_STATE');
    expect((await post(dash.url, '/api/retry', {})).status).toBe(400);
    expect((await call(dash.url, '/api/nothing')).status).toBe(404);
  });

  it('routes by its table: NOT_FOUND for an unknown path, 405 naming the methods of a known one', async () => {
    const unknown = await call(dash.url, '/api/nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toEqual({
      code: 'NOT_FOUND',
      message: 'no such page or endpoint: GET /api/nothing',
    });
    const unknownPost = await post(dash.url, '/api/retry-everything', {});
    expect(unknownPost.status).toBe(404);
    expect(unknownPost.body.error.code).toBe('NOT_FOUND');
    const getAction = await call(dash.url, '/api/retry');
    expect(getAction.status).toBe(405);
    expect(getAction.headers.get('allow')).toBe('POST');
    expect(getAction.body.error.code).toBe('BAD_ARGUMENTS');
    const postRead = await post(dash.url, '/api/counts', {});
    expect(postRead.status).toBe(405);
    expect(postRead.headers.get('allow')).toBe('GET, HEAD');
    const put = await call(dash.url, '/api/task', { method: 'PUT' });
    expect(put.status).toBe(405);
    // HEAD is answered as GET: the page's headers, no body.
    const head = await fetch(new URL('/api/worlds', dash.url), {
      method: 'HEAD',
      headers: bearer ? { Authorization: `Bearer ${bearer}` } : {},
    });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('serves the schedules, the elected scheduler and the rate limits', async () => {
    await addSchedule(engine, { name: 'nightly', cron: '0 2 * * *', tz: 'UTC', type: 'parent' });
    await setRateLimit(engine, 'child', '10/s');
    try {
      await eventually(async () =>
        (await call(dash.url, '/api/schedules')).body.scheduler === 'w-api' ? true : undefined,
      );
      const body = (await call(dash.url, `/api/schedules?world=${WORLD}`)).body;
      expect(body.schedules).toMatchObject([
        { name: 'nightly', cron: '0 2 * * *', tz: 'UTC', type: 'parent' },
      ]);
      expect(body.schedules[0].nextTick).toBeGreaterThan(Date.now());
      expect(body.limits).toEqual([
        {
          type: 'child',
          rate: '10/s',
          count: 10,
          perMs: 1000,
          workers: 1,
          perWorkerPerSecond: 10,
        },
      ]);
    } finally {
      await removeSchedule(engine, 'nightly');
      await removeRateLimit(engine, 'child');
    }
    expect((await call(dash.url, '/api/schedules')).body).toMatchObject({
      schedules: [],
      limits: [],
    });
  });

  it('does not show a persistent registry node (no session owns it) as a live worker', async () => {
    const c = engine.coordinator;
    const ghost = `/zoott_workers/${WORLD}/worker-0000009999`;
    await c.create(ghost, utf8.encode(JSON.stringify({ id: 'ghost', types: ['parent'] })));
    try {
      const workers = (await call(dash.url, '/api/workers')).body as { id: string }[];
      expect(workers.map((w) => w.id)).toEqual(['w-api']);
    } finally {
      await c.delete(ghost);
    }
  });

  it('refuses changes that are not JSON from its own origin', async () => {
    const form = await call(dash.url, '/api/retry', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'key=flaky',
    });
    expect(form.status).toBe(415);
    const foreign = await post(
      dash.url,
      '/api/retry',
      { key: 'flaky' },
      { Origin: 'http://evil.example' },
    );
    expect(foreign.status).toBe(403);
    // A page on another name that resolves to 127.0.0.1 (DNS rebinding) cannot read the API:
    // the browser sends it no token (none rides in a cookie).
    const u = new URL('/api/counts', dash.url);
    const status = await statusForForeignHost(u.hostname, u.port, u.pathname);
    expect(status).toBe(401);
  });

  it('streams task events and serves retry, cancel and retry-all', async () => {
    const sse = await openEventStream(
      new URL(`/api/events?world=${WORLD}&token=${dash.token}`, dash.url).href,
    );
    try {
      expect(sse.status).toBe(200);
      await sse.next((e) => e.event === 'hello');
      failing = false;
      const retried = await post(dash.url, '/api/retry', { world: WORLD, key: 'flaky' });
      expect(retried.status).toBe(200);
      await sse.next(taskEvent('completed', ['flaky']));
      await engine.queue({ name: 'unrun', type: 'nobody' });
      await sse.next(taskEvent('queued', ['unrun']));
      const cancelled = await post(dash.url, '/api/cancel', { key: ['unrun'] });
      expect(cancelled.body).toMatchObject({ ok: true, cancelled: [['unrun']] });
      await sse.next(taskEvent('cancelled', ['unrun']));
      // retry-all over two failures.
      failing = true;
      await engine.queue({ name: 'flaky', type: 'flaky' }, null, null, { maxAttempts: 1 });
      await engine.queue({ name: 'flaky2', type: 'flaky' }, null, null, { maxAttempts: 1 });
      await sse.next(taskEvent('failed', ['flaky2']));
      await sse.next(taskEvent('failed', ['flaky']));
      failing = false;
      const all = await post(dash.url, '/api/retry-all', {});
      expect(all.body).toMatchObject({ ok: true, retried: 2, errors: [] });
      await eventually(async () => {
        const c = await engine.counts();
        return c.failed === 0 && c.pending === 0 ? true : undefined;
      });
      const overview = (await call(dash.url, '/api/overview')).body;
      const done = overview.throughput.slots.reduce(
        (n: number, s: { completed: number }) => n + s.completed,
        0,
      );
      expect(done).toBeGreaterThanOrEqual(3);
    } finally {
      sse.close();
    }
  });

  it('keeps streaming after its ZooKeeper connection drops and after its session expires', async () => {
    const sse = await openEventStream(
      new URL(`/api/events?world=${WORLD}&token=${dash.token}`, dash.url).href,
    );
    try {
      await sse.next((e) => e.event === 'hello');
      proxy.dropConnections();
      await sse.next(
        (e) => e.event === 'status' && (e.data as { zookeeper: string }).zookeeper === 'suspended',
      );
      await sse.next(
        (e) => e.event === 'status' && (e.data as { zookeeper: string }).zookeeper === 'connected',
      );
      await engine.queue({ name: 'after-drop', type: 'nobody' });
      await sse.next(taskEvent('queued', ['after-drop']));

      await killSession(dashClient as ZkCoordinator);
      await sse.next(
        (e) => e.event === 'status' && (e.data as { zookeeper: string }).zookeeper === 'lost',
      );
      // The dashboard renews its session and restarts its watches; pages are told to re-read.
      await sse.next((e) => e.event === 'resync', 20_000);
      await engine.queue({ name: 'after-expiry', type: 'nobody' });
      await sse.next(taskEvent('queued', ['after-expiry']));
      expect((await call(dash.url, '/api/counts')).body.pending).toBe(2);
    } finally {
      sse.close();
    }
  });
});

describe('dashboard access control [zookeeper]', () => {
  let ns: Awaited<ReturnType<typeof zkNamespace>>;
  let coordinator: Coordinator;
  const token = 'secret-token-0123456789';

  beforeAll(async () => {
    ns = await zkNamespace(inject('zkConnect'));
    coordinator = await ns.connect();
    await createEngine(coordinator, { world: 'guarded', buckets: 2, logger: quiet }).init();
  });
  afterAll(async () => {
    await ns?.close();
  });

  it('refuses to bind beyond loopback without a token, and checks option values', async () => {
    await expect(
      startDashboard({
        assetsDir: assetsDir(),
        coordinator,
        host: '0.0.0.0',
        port: 0,
      }),
    ).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      field: 'token',
      message: expect.stringContaining('0.0.0.0'),
    });
    await expect(
      startDashboard({
        assetsDir: assetsDir(),
        coordinator,
        host: '0.0.0.0',
        port: 0,
        token: 'short',
      }),
    ).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      field: 'token',
    });
    await expect(
      startDashboard({
        assetsDir: assetsDir(),
        coordinator,
        port: 70000,
      }),
    ).rejects.toMatchObject({
      field: 'port',
    });
    await expect(
      startDashboard({
        assetsDir: assetsDir(),
        coordinator,
        world: 'p',
      }),
    ).rejects.toMatchObject({
      field: 'world',
    });
    await expect(
      startDashboard({
        assetsDir: assetsDir(),
        coordinator: {} as Coordinator,
        port: 0,
      }),
    ).rejects.toMatchObject({ field: 'coordinator' });
  });

  it('on loopback makes a random token: every page, API route and action needs it, never from a cookie', async () => {
    const dash = await startDashboard({
      assetsDir: assetsDir(),
      coordinator,
      port: 0,
      logger: quiet,
    });
    const other = await startDashboard({
      assetsDir: assetsDir(),
      coordinator,
      port: 0,
      logger: quiet,
    });
    try {
      expect(dash.token).toMatch(/^[\w-]{24}$/);
      expect(other.token).not.toBe(dash.token);
      expect(dash.openUrl).toBe(`${dash.url}?token=${dash.token}`);
      const gets = [
        '/',
        '/assets/app.js',
        '/api/config',
        '/api/worlds',
        '/api/overview',
        '/api/counts',
        '/api/list?state=pending',
        '/api/tree',
        '/api/task?key=x',
        '/api/workers',
        '/api/failed',
        '/api/events',
      ];
      for (const path of gets) {
        const res = await fetch(new URL(path, dash.url));
        expect({ path, status: res.status }).toEqual({ path, status: 401 });
        await res.body?.cancel();
      }
      for (const path of ['/api/retry', '/api/cancel', '/api/retry-all']) {
        const res = await post(dash.url, path, { key: 'x' });
        expect({ path, status: res.status }).toEqual({ path, status: 401 });
      }
      // Another dashboard's token is no good here.
      const wrong = await call(dash.url, '/api/counts', {
        headers: { Authorization: `Bearer ${other.token}` },
      });
      expect(wrong.status).toBe(401);
      // The printed URL works, and sets no cookie: a cookie reaches every port of the host.
      const page = await fetch(dash.openUrl);
      expect(page.status).toBe(200);
      await page.text();
      expect(page.headers.get('set-cookie')).toBeNull();
      // A cookie holding the token (as an older dashboard set) opens nothing.
      for (const name of [`zoott_token_${dash.port}`, 'token']) {
        const res = await fetch(new URL('/api/counts', dash.url), {
          headers: { Cookie: `${name}=${dash.token}` },
        });
        expect(res.status).toBe(401);
        await res.body?.cancel();
      }
      const ok = await fetch(new URL(`/api/counts?world=guarded&token=${dash.token}`, dash.url));
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ pending: 0, working: 0, completed: 0, failed: 0 });
    } finally {
      await dash.close();
      await other.close();
    }
  });

  it('noToken serves loopback without one (Host still checked) and is refused beyond loopback', async () => {
    await expect(
      startDashboard({
        assetsDir: assetsDir(),
        coordinator,
        host: '0.0.0.0',
        port: 0,
        noToken: true,
      }),
    ).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      field: 'noToken',
      message: expect.stringContaining('loopback address only'),
    });
    await expect(
      startDashboard({ assetsDir: assetsDir(), coordinator, port: 0, noToken: true, token }),
    ).rejects.toMatchObject({ field: 'noToken' });
    const open = await startDashboard({
      assetsDir: assetsDir(),
      coordinator,
      port: 0,
      noToken: true,
      logger: quiet,
    });
    try {
      expect(open.token).toBeNull();
      expect(open.openUrl).toBe(open.url);
      expect((await call(open.url, '/api/counts?world=guarded')).status).toBe(200);
      // Without a token the Host check stands against DNS rebinding.
      const rebound = await statusForForeignHost('127.0.0.1', open.port, '/api/counts');
      expect(rebound).toBe(403);
    } finally {
      await open.close();
    }
  });

  it('checks the token on every request and on the live stream when bound beyond loopback', async () => {
    const dash = await startDashboard({
      assetsDir: assetsDir(),
      coordinator,
      host: '0.0.0.0',
      port: 0,
      token,
      logger: quiet,
    });
    try {
      expect(dash.url).toBe(`http://0.0.0.0:${dash.port}/`);
      const base = `http://127.0.0.1:${dash.port}/`;
      for (const path of ['/', '/assets/app.js', '/api/counts', '/api/events']) {
        const res = await fetch(new URL(path, base));
        expect(res.status).toBe(401);
        await res.body?.cancel();
      }
      expect((await fetch(new URL(`/api/counts?token=wrong-${token}`, base))).status).toBe(401);
      const bearer = await call(base, '/api/counts', {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(bearer.body).toEqual({ pending: 0, working: 0, completed: 0, failed: 0 });
      const page = await fetch(new URL(`/?token=${token}`, base));
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain(`/assets/app.js?v=`);
      expect(html).toContain(`token=${token}`);
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
      const sse = await openEventStream(new URL(`/api/events?token=${token}`, base).href);
      expect(sse.status).toBe(200);
      await sse.next((e) => e.event === 'hello');
      sse.close();
      const writes = await post(base, '/api/retry-all', {});
      expect(writes.status).toBe(401);
    } finally {
      await dash.close();
    }
  });
});

describe('dashboard on a namespace with no world [zookeeper]', () => {
  let ns: Awaited<ReturnType<typeof zkNamespace>>;

  beforeAll(async () => {
    ns = await zkNamespace(inject('zkConnect'));
  });
  afterAll(async () => {
    await ns?.close();
  });

  it('says the world is not initialised (not that a task is missing)', async () => {
    const dash = await startDashboard({
      assetsDir: assetsDir(),
      coordinator: await ns.connect(),
      port: 0,
    });
    try {
      const r = await call(dash.url, '/api/overview', {
        headers: { Authorization: `Bearer ${dash.token}` },
      });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('WORLD_NOT_INITIALISED');
      expect(r.body.error.message).toContain('no world is initialised');
    } finally {
      await dash.close();
    }
  });
});
