import {
  type Coordinator,
  createEngine,
  type Engine,
  runWorker,
  type WorkerHandle,
} from '@zoott/core';
import type { DashboardHandle } from '@zoott/dashboard';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  assetsForFile,
  dashboardInBrowser,
  eventually,
  openLivePage,
  PAGE_TIMEOUT_MS,
  serveDashboard,
  zkNamespace,
} from './helpers.js';

// Job control on the dashboard, on a real ZooKeeper: a running task's progress and log live
// on its page, pause and resume of a world, cancel with its subtree.
const WORLD = 'control';
const quiet = { warn: () => {} };

const assetsDir = assetsForFile();

describe('dashboard job control [zookeeper]', () => {
  let ns: Awaited<ReturnType<typeof zkNamespace>>;
  let producer: Coordinator;
  let engine: Engine;
  let dash: DashboardHandle;
  let browser: Browser;
  let worker: WorkerHandle;
  /** Moves the reporting task on: each call lets it report the next step. */
  const steps: (() => void)[] = [];
  const step = () => new Promise<void>((r) => steps.push(r));

  beforeAll(async () => {
    ns = await zkNamespace(inject('zkConnect'));
    producer = await ns.connect();
    engine = createEngine(producer, { world: WORLD, buckets: 4, logger: quiet });
    await engine.init();
    worker = runWorker(
      await ns.connect(),
      {
        report: async (t) => {
          t.progress(0.25);
          t.log('fetched the index');
          await step();
          t.progress(0.75);
          t.log('three of four files');
          await step();
          return 'reported';
        },
        quick: () => 'ok',
      },
      { world: WORLD, concurrency: 2, stealAfterMs: 50, pollMs: 300, logger: quiet },
    );
    ({ dash, browser } = await dashboardInBrowser(assetsDir(), await ns.connect(), WORLD));
  });

  afterAll(async () => {
    for (const s of steps.splice(0)) s();
    await browser?.close();
    await dash?.close();
    await worker?.stop();
    await ns?.close();
  });

  function open(path: string): Promise<Page> {
    return openLivePage(browser, `${dash.openUrl}${path}`);
  }

  it("shows a running task's progress and log lines as they come", async () => {
    await engine.queue({ name: 'reporter', type: 'report' });
    await eventually(async () => ((await engine.progress(['reporter'])) ? true : undefined));
    const page = await open('#/control/task/reporter');
    await page.waitForSelector('[data-field="progress"]:has-text("25%")');
    expect(await page.textContent('[data-field="log"]')).toContain('fetched the index');
    // The next report reaches the open page through the live stream, without a reload.
    await eventually(async () => (steps.length > 0 ? true : undefined));
    steps.shift()!();
    await page.waitForSelector('[data-field="progress"]:has-text("75%")');
    expect(await page.textContent('[data-field="log"]')).toContain('three of four files');
    await eventually(async () => (steps.length > 0 ? true : undefined));
    steps.shift()!();
    await page.waitForSelector('[data-field="state"]:has-text("completed")');
    expect(await page.textContent('[data-field="log"]')).toContain('three of four files');
    await page.close();
  });

  it('pauses and resumes the world from the overview; workers follow', async () => {
    const page = await open('#/control/overview');
    await page.waitForSelector('[data-fact="paused"]:has-text("running")');
    await page.click('button[data-action="pause"]');
    await page.waitForSelector('[data-fact="paused"]:has-text("paused (every type)")');
    expect(await engine.pauseState()).toEqual({ world: true, types: [] });
    await eventually(async () => (worker.paused.world ? true : undefined));
    await engine.queue({ name: 'held', type: 'quick' });
    const resumedAt = Date.now();
    await page.click('button[data-action="resume"]');
    await page.waitForSelector('[data-fact="paused"]:has-text("running")');
    await eventually(async () =>
      (await engine.task(['held']))?.state === 'completed' ? true : undefined,
    );
    expect((await engine.task(['held']))?.startedAt).toBeGreaterThanOrEqual(resumedAt);
    await page.close();
  });

  it('the API pauses one type, refuses a bad one, and cancels a parent only with its subtree', async () => {
    const post = (path: string, body: unknown) =>
      fetch(new URL(path, dash.url), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${dash.token}` },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    expect(await post('/api/pause', { world: WORLD, type: 'quick' })).toMatchObject({
      status: 200,
      body: { ok: true, paused: { world: false, types: ['quick'] } },
    });
    expect((await post('/api/pause', { world: WORLD, type: 7 })).body).toMatchObject({
      error: { message: expect.stringMatching(/type: must be a task type/) },
    });
    expect((await post('/api/resume', { world: WORLD })).body.paused).toEqual({
      world: false,
      types: [],
    });
    await engine.queue({ name: 'top', type: 'none' });
    await engine.queue({ name: 'kid', type: 'none', parent: { key: ['top'] } });
    const alone = await post('/api/cancel', { world: WORLD, key: ['top'] });
    expect(alone.status).toBe(409);
    expect(alone.body.error.message).toMatch(/has 1 child task/);
    expect(
      (await post('/api/cancel', { world: WORLD, key: ['top'], subtree: true })).body,
    ).toMatchObject({
      ok: true,
      cancelled: [['top', 'kid'], ['top']],
    });
  });

  it('cancels a parent with its subtree from its page, after a second click', async () => {
    await engine.queue({ name: 'p2', type: 'none' });
    await engine.queue({ name: 'k2', type: 'none', parent: { key: ['p2'] } });
    const page = await open('#/control/task/p2');
    await page.waitForSelector('button[data-action="cancel-subtree"]');
    await page.click('button[data-action="cancel-subtree"]');
    expect(await page.textContent('button[data-action="cancel-subtree"]')).toMatch(/Click again/);
    expect(await engine.task(['p2'])).not.toBeNull();
    await page.click('button[data-action="cancel-subtree"]');
    await page.waitForSelector('p.error:has-text("does not exist")');
    expect(await engine.task(['p2'])).toBeNull();
    expect(await engine.task(['p2', 'k2'])).toBeNull();
    await page.close();
  });

  it('a live re-render of the page between the two clicks keeps the first one', async () => {
    await engine.queue({ name: 'p3', type: 'rerender' });
    await engine.queue({ name: 'k3', type: 'none', parent: { key: ['p3'] } });
    const page = await open('#/control/task/p3');
    const button = 'button[data-action="cancel-subtree"]';
    await page.waitForSelector(button);
    await page.click(button);
    expect(await page.textContent(button)).toMatch(/Click again/);
    // The first click's button is marked; the task starts, and the live page renders anew.
    await page.$eval(button, (b) => b.setAttribute('data-first', ''));
    expect((await engine.claim({ types: ['rerender'] }))?.key).toEqual(['p3']);
    await page.waitForSelector(`${button}:not([data-first])`);
    expect(await page.textContent(button)).toMatch(/Click again/);
    await page.click(button);
    await page.waitForSelector('p.error:has-text("does not exist")');
    expect(await engine.task(['p3'])).toBeNull();
    await page.close();
  });

  it('read-only shows no pause control and refuses pause and resume', async () => {
    const ro = await serveDashboard(assetsDir(), await ns.connect(), WORLD, { readOnly: true });
    try {
      const page = await browser.newPage();
      page.setDefaultTimeout(PAGE_TIMEOUT_MS);
      await page.goto(`${ro.openUrl}#/control/overview`);
      await page.waitForSelector('[data-fact="paused"]:has-text("running")');
      expect(await page.$$('[data-action]')).toHaveLength(0);
      for (const path of ['/api/pause', '/api/resume']) {
        const res = await fetch(new URL(path, ro.url), {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${ro.token}` },
          body: JSON.stringify({ world: WORLD }),
        });
        expect({ path, status: res.status }).toEqual({ path, status: 403 });
      }
      expect(await engine.pauseState()).toEqual({ world: false, types: [] });
      await page.close();
    } finally {
      await ro.close();
    }
  });
});
