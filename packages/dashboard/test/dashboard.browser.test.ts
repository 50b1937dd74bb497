import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  addSchedule,
  type Coordinator,
  createEngine,
  type Engine,
  removeRateLimit,
  removeSchedule,
  runWorker,
  setRateLimit,
  type WorkerHandle,
} from '@zoott/core';
import type { DashboardHandle } from '@zoott/dashboard';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  assetsForFile,
  dashboardInBrowser,
  openLivePage,
  PAGE_TIMEOUT_MS,
  serveDashboard,
  zkNamespace,
} from './helpers.js';

const WORLD = 'demo';
const quiet = { warn: () => {} };
const docsDir = fileURLToPath(new URL('../docs/', import.meta.url));

/** The page bundle, built once per file from the current source. */
const assetsDir = assetsForFile();

describe('dashboard in headless Chromium [zookeeper]', () => {
  let ns: Awaited<ReturnType<typeof zkNamespace>>;
  let producer: Coordinator;
  let engine: Engine;
  let dash: DashboardHandle;
  let browser: Browser;
  const workers: WorkerHandle[] = [];
  /** processFile of file-c fails while this is set; the retry test clears it. */
  let failProcess = true;
  /** Released by the test that watches a task go from pending to completed. */
  let releaseLive: () => void = () => {};
  const liveGate = new Promise<void>((r) => {
    releaseLive = r;
  });
  /** Keeps file-d's processFile working until the end, so the tree shows every state. */
  let releaseHold: () => void = () => {};
  const holdGate = new Promise<void>((r) => {
    releaseHold = r;
  });

  beforeAll(async () => {
    ns = await zkNamespace(inject('zkConnect'));
    producer = await ns.connect();
    engine = createEngine(producer, { world: WORLD, buckets: 8, logger: quiet });
    await engine.init();
    // The demo world: requestFile -> downloadFile -> processFile over a few files.
    for (const f of ['file-a', 'file-b', 'file-c', 'file-d']) {
      await engine.queue({
        name: f,
        type: 'requestFile',
        data: { url: `https://example.org/${f}` },
      });
      await engine.queue({ name: 'download', type: 'downloadFile' }, { key: [f] });
      await engine.queue(
        { name: 'process', type: 'processFile', data: { file: f } },
        { key: [f, 'download'] },
        null,
        {
          maxAttempts: 1,
        },
      );
    }
    // file-e waits an hour, so it and its child stay pending.
    await engine.queue({ name: 'file-e', type: 'requestFile' }, null, null, {
      notBefore: Date.now() + 3_600_000,
    });
    await engine.queue({ name: 'download', type: 'downloadFile' }, { key: ['file-e'] });
    const wc = await ns.connect();
    workers.push(
      runWorker(
        wc,
        {
          requestFile: (t) => ({ requested: t.name }),
          downloadFile: (t) => ({ bytes: 1024, file: t.key[0] }),
          processFile: async (t) => {
            if (t.key[0] === 'file-d') await holdGate;
            if (t.key[0] === 'file-c' && failProcess) throw new Error('checksum mismatch');
            return {
              stdout: `processed ${t.key[0]}\n`,
              stderr: 'warning: slow disk\n',
              exit: 0,
              truncated: true,
              server: 'test-host',
              pid: 4242,
              started: new Date(0).toISOString(),
              finished: new Date(1500).toISOString(),
            };
          },
          live: async () => {
            await liveGate;
            return 'done';
          },
          explode: () => {
            throw new Error('always fails');
          },
        },
        {
          world: WORLD,
          concurrency: 4,
          id: 'w-test',
          host: 'test-host',
          stealAfterMs: 50,
          pollMs: 300,
          logger: quiet,
        },
      ),
    );
    // Wait for the demo tree to settle: file-c's process failed, file-d's is running.
    for (;;) {
      const c = await engine.counts();
      if (c.completed === 10 && c.failed === 1 && c.working === 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    ({ dash, browser } = await dashboardInBrowser(assetsDir(), await ns.connect(), WORLD));
  });

  afterAll(async () => {
    releaseLive();
    releaseHold();
    await browser?.close();
    await dash?.close();
    await Promise.allSettled(workers.map((w) => w.stop()));
    await ns?.close();
  });

  /** Opens the page as a user does: the printed URL, which carries the access token. */
  function open(path: string, base = dash.openUrl): Promise<Page> {
    return openLivePage(browser, `${base}${path}`);
  }

  it('shows counts per area and the tree of a world', async () => {
    const page = await open('#/demo/overview');
    await page.waitForSelector('.card[data-count="completed"] .card-value');
    const value = (s: string) => page.textContent(`.card[data-count="${s}"] .card-value`);
    expect(await value('completed')).toBe('10');
    expect(await value('failed')).toBe('1');
    expect(await value('working')).toBe('1');
    expect(await value('pending')).toBe('2');
    expect(await page.textContent('.worlds')).toContain('demo');

    await page.click('.tabs a:has-text("Tree")');
    await page.waitForSelector('.row[data-key="file-a|download|process"]');
    expect(await page.getAttribute('.row[data-key="file-c|download|process"]', 'data-state')).toBe(
      'failed',
    );
    expect(await page.getAttribute('.row[data-key="file-a"]', 'data-state')).toBe('completed');
    // Subtree counts on a root: three completed tasks under file-a.
    expect(await page.textContent('.row[data-key="file-a"] .subcounts')).toBe('3');
    // Search narrows the rows to matches and their ancestors.
    await page.fill('.search', 'processFile');
    await page.waitForFunction(() => document.querySelectorAll('.row').length === 12);
    // Collapsing a node hides its children.
    await page.fill('.search', '');
    await page.waitForFunction(() => document.querySelectorAll('.row').length === 14);
    await page.click('.row[data-key="file-b"] .toggle');
    await page.waitForSelector('.row[data-key="file-b|download"]', { state: 'detached' });
    await page.close();
  });

  it('writes the tree screenshot of the demo world for the README', async () => {
    const page = await open('#/demo/tree');
    await page.setViewportSize({ width: 1100, height: 600 });
    await page.waitForSelector('.row[data-key="file-d|download|process"]');
    await page.waitForSelector('.row[data-key="file-d|download|process"][data-state="working"]');
    const shot = await page.screenshot({ type: 'png' });
    expect(shot.length).toBeGreaterThan(5000);
    if (process.env.ZOOTT_WRITE_SCREENSHOT) {
      mkdirSync(docsDir, { recursive: true });
      await page.screenshot({ path: `${docsDir}/dashboard-tree.png`, type: 'png' });
    }
    await page.close();
  });

  it('updates a task from pending to completed without reloading', async () => {
    const page = await open('#/demo/tree');
    await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = 42;
    });
    let navigations = 0;
    page.on('framenavigated', () => navigations++);
    await engine.queue({ name: 'live-task', type: 'live' });
    // The worker claims it at once and waits on the gate: pending or working first.
    await page.waitForSelector(
      '.row[data-key="live-task"]:is([data-state="pending"],[data-state="working"])',
    );
    await page.waitForSelector('.row[data-key="live-task"][data-state="working"]');
    releaseLive();
    await page.waitForSelector('.row[data-key="live-task"][data-state="completed"]');
    expect(await page.evaluate(() => (window as unknown as { marker: number }).marker)).toBe(42);
    expect(navigations).toBe(0);
    await page.close();
  });

  it("opens a task's page with its job result", async () => {
    const page = await open('#/demo/tree');
    await page.click('.row[data-key="file-a|download|process"] a.name');
    await page.waitForSelector('[data-field="job-result"]');
    expect(await page.textContent('[data-field="stdout"]')).toBe('processed file-a\n');
    expect(await page.textContent('[data-field="stderr"]')).toBe('warning: slow disk\n');
    expect(await page.textContent('[data-field="ending"]')).toBe('exit 0');
    expect(await page.isVisible('[data-field="truncated"]')).toBe(true);
    expect(await page.textContent('.fields')).toContain('w-test');
    expect(await page.textContent('[data-field="data"]')).toContain('"file": "file-a"');
    await page.close();
  });

  it('retries a failed task from the failed list and sees it complete', async () => {
    const page = await open('#/demo/failed');
    const row = '.failed tr[data-key="file-c|download|process"]';
    await page.waitForSelector(row);
    expect(await page.textContent(row)).toContain('checksum mismatch');
    failProcess = false;
    await page.click(`${row} button[data-action="retry"]`);
    await page.waitForSelector(row, { state: 'detached' });
    await page.waitForSelector('.failed >> text=No failed task.');
    await page.click('.tabs a:has-text("Tree")');
    await page.waitForSelector('.row[data-key="file-c|download|process"][data-state="completed"]');
    await page.close();
  });

  it('lists the schedules with the elected scheduler, and the rate limits', async () => {
    await addSchedule(engine, { name: 'nightly', cron: '0 2 * * *', type: 'requestFile' });
    await setRateLimit(engine, 'explode', '30/m');
    try {
      const page = await open('#/demo/schedules');
      const row = '.schedules tr[data-schedule="nightly"]';
      await page.waitForSelector(row);
      expect(await page.textContent(row)).toContain('0 2 * * *');
      await page.waitForSelector('[data-field="scheduler"] >> text=Scheduler: w-test');
      const limit = '.limits tr[data-limit="explode"]';
      await page.waitForSelector(limit);
      expect(await page.textContent(limit)).toContain('30/m');
      await page.close();
    } finally {
      await removeSchedule(engine, 'nightly');
      await removeRateLimit(engine, 'explode');
    }
  });

  it('recovers its live stream after the dashboard server restarts', async () => {
    const port = dash.port;
    const page = await open('#/demo/tree');
    const token = dash.token ?? undefined; // the page keeps the token it was served with
    await dash.close();
    await page.waitForSelector('.live-status[data-live="off"]');
    dash = await serveDashboard(assetsDir(), await ns.connect(), WORLD, { port, token });
    await page.waitForSelector('.live-status[data-live="on"]');
    await engine.queue({ name: 'after-restart', type: 'nobody-runs-this' });
    await page.waitForSelector('.row[data-key="after-restart"][data-state="pending"]');
    await page.close();
  });

  it('read-only shows no retry or cancel control and the API refuses them', async () => {
    await engine.queue({ name: 'boom', type: 'explode' }, null, null, { maxAttempts: 1 });
    const ro = await serveDashboard(assetsDir(), await ns.connect(), WORLD, { readOnly: true });
    try {
      const page = await open('#/demo/failed', ro.openUrl);
      await page.waitForSelector('.failed tr[data-key="boom"]');
      expect(await page.$$('[data-action]')).toHaveLength(0);
      expect(await page.isVisible('.badge.read-only')).toBe(true);
      await page.goto(`${ro.openUrl}#/demo/task/boom`);
      await page.waitForSelector('[data-field="error"]');
      expect(await page.textContent('[data-field="error"]')).toContain('always fails');
      expect(await page.$$('[data-action]')).toHaveLength(0);
      for (const path of ['/api/retry', '/api/retry-all', '/api/cancel']) {
        const res = await fetch(new URL(path, ro.url), {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${ro.token}` },
          body: JSON.stringify({ world: WORLD, key: ['boom'] }),
        });
        expect(res.status).toBe(403);
      }
      expect(await engine.task(['boom'])).toMatchObject({ state: 'failed' });
      await page.close();
    } finally {
      await ro.close();
    }
  });

  it('on loopback refuses the bare URL; the printed one works, and keeps working on reload', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    const refused = await page.goto(`${dash.url}#/demo/overview`);
    expect(refused?.status()).toBe(401);
    await page.goto(`${dash.openUrl}#/demo/tree`);
    await page.waitForSelector('.live-status[data-live="on"]');
    // Moving between views keeps ?token= in the address, so a reload has it.
    await page.click('.tabs a:has-text("Overview")');
    await page.waitForSelector('.card[data-count="completed"] .card-value');
    expect(page.url()).toContain(`?token=${dash.token}#/demo/`);
    const reloaded = await page.reload();
    expect(reloaded?.status()).toBe(200);
    await page.waitForSelector('.live-status[data-live="on"]');
    // No cookie carries the token: without it in the address, the dashboard stays shut.
    const bare = await page.goto(`${dash.url}#/demo/tree`);
    expect(bare?.status()).toBe(401);
    await page.close();
  });

  it('its token reaches no other port: a page another local server serves gets nothing that opens the dashboard', async () => {
    // Any other program on this host could serve a page on another port: it records what
    // the browser sends it.
    const received: string[] = [];
    const other = createServer((req, res) => {
      received.push(req.headers.cookie ?? '');
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<!doctype html><title>another program</title><img src="/pixel.png">');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}/`;
    const page = await browser.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    try {
      await page.goto(`${dash.openUrl}#/demo/overview`);
      await page.waitForSelector('.live-status[data-live="on"]');
      await page.goto(otherUrl);
      await page.waitForLoadState('load');
      expect(received.length).toBeGreaterThan(0);
      expect(received.join('\n')).not.toContain(dash.token!);
      expect((await page.context().cookies()).filter((c) => c.value.includes(dash.token!))).toEqual(
        [],
      );
      // Whatever it received, replayed to the dashboard, opens nothing.
      for (const cookie of ['', ...received]) {
        const res = await fetch(new URL('/api/counts', dash.url), { headers: { Cookie: cookie } });
        expect(res.status).toBe(401);
        await res.body?.cancel();
      }
    } finally {
      await page.close();
      await new Promise((r) => other.close(r));
    }
  });

  it('asks for the token when bound beyond loopback and works with it', async () => {
    const token = 'browser-token-0123456789';
    const guarded = await serveDashboard(assetsDir(), await ns.connect(), WORLD, {
      host: '0.0.0.0',
      token,
    });
    try {
      const base = `http://127.0.0.1:${guarded.port}/`;
      const page = await browser.newPage();
      page.setDefaultTimeout(PAGE_TIMEOUT_MS);
      const refused = await page.goto(`${base}#/demo/overview`);
      expect(refused?.status()).toBe(401);
      await page.goto(`${base}?token=${token}#/demo/tree`);
      await page.waitForSelector('.live-status[data-live="on"]');
      await engine.queue({ name: 'with-token', type: 'nobody-runs-this' });
      await page.waitForSelector('.row[data-key="with-token"][data-state="pending"]');
      await page.close();
    } finally {
      await guarded.close();
    }
  });

  it('keeps a tree of 10,000 tasks responsive by drawing only the rows in view', {
    timeout: 90_000,
  }, async () => {
    const big = createEngine(producer, { world: 'big', buckets: 16, logger: quiet });
    await big.init();
    const roots = Array.from({ length: 100 }, (_, i) => `r${String(i).padStart(3, '0')}`);
    await Promise.all(roots.map((r) => big.queue({ name: r, type: 'batch' })));
    const children = roots.flatMap((r) =>
      Array.from({ length: 99 }, (_, j) => [r, `c${String(j).padStart(3, '0')}`] as const),
    );
    let next = 0;
    await Promise.all(
      Array.from({ length: 256 }, async () => {
        while (next < children.length) {
          const [r, c] = children[next++]!;
          await big.queue({ name: c, type: 'item' }, { key: [r] });
        }
      }),
    );
    const page = await open('#/big/tree');
    await page.waitForFunction(
      () => document.querySelector('.tree-summary')?.textContent?.startsWith('10000 tasks'),
      null,
      { timeout: 30_000 },
    );
    const drawn = await page.$$eval('.row', (rows) => rows.length);
    expect(drawn).toBeGreaterThan(10);
    expect(drawn).toBeLessThan(120);
    // Scrolling to the end draws the last rows, still only a window of them.
    await page.$eval('.tree-scroll', (el) => {
      el.scrollTop = el.scrollHeight;
    });
    await page.waitForSelector('.row[data-key="r099|c098"]');
    expect(await page.$$eval('.row', (rows) => rows.length)).toBeLessThan(120);
    // Search works on the whole tree, not just the drawn rows.
    await page.fill('.search', 'c042');
    await page.waitForFunction(() =>
      document.querySelector('.tree-summary')?.textContent?.includes('200 rows match'),
    );
    await page.waitForSelector('.row[data-key="r000|c042"]');
    await page.close();
  });
});
