import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Coordinator } from '@zoott/core';
import { type DashboardHandle, type DashboardOptions, startDashboard } from '@zoott/dashboard';
import { freshChroot } from '@zoott/testing';
import { connectZk } from '@zoott/zk-adapter';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

export const CHROMIUM = process.env.ZOOTT_CHROMIUM ?? '/usr/bin/chromium';
const packageDir = fileURLToPath(new URL('..', import.meta.url));

/**
 * Builds the browser bundle from the current source into a fresh folder and returns it (pass
 * it as `assetsDir`), so tests never serve a stale or half-written dist.
 */
export function buildAssets(): string {
  const out = mkdtempSync(join(tmpdir(), 'zoott-dash-assets-'));
  execFileSync('pnpm', ['exec', 'tsup'], {
    cwd: packageDir,
    stdio: 'pipe',
    env: { ...process.env, ZOOTT_DASHBOARD_ASSETS_OUT: out },
  });
  return out;
}

/**
 * The page bundle, built once for the calling test file (in a beforeAll) and removed after its
 * tests; the returned function gives the folder, for `assetsDir`.
 */
export function assetsForFile(): () => string {
  let dir = '';
  beforeAll(() => {
    dir = buildAssets();
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return () => dir;
}

/**
 * Headless Debian Chromium. `launch` always starts from a fresh temporary profile (it refuses
 * `--user-data-dir`); the flags let it run as root and keep it off the network.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** The dashboard of `world` on a free port, warnings kept quiet; `more` adds or overrides options. */
export function serveDashboard(
  assetsDir: string,
  coordinator: Coordinator,
  world: string,
  more: Partial<DashboardOptions> = {},
): Promise<DashboardHandle> {
  return startDashboard({
    assetsDir,
    coordinator,
    world,
    port: 0,
    logger: { warn: () => {} },
    ...more,
  });
}

/** The dashboard of `world` as `serveDashboard` starts it, and a browser to view it. */
export async function dashboardInBrowser(
  assetsDir: string,
  coordinator: Coordinator,
  world: string,
): Promise<{ dash: DashboardHandle; browser: Browser }> {
  const dash = await serveDashboard(assetsDir, coordinator, world);
  const browser = await launchBrowser();
  return { dash, browser };
}

/**
 * How long a page waits for an element before the test fails: a failure detector sized for a
 * loaded 2-core machine running the whole suite (a 10 s wait once ran out there), inside the
 * 30 s a test may take.
 */
export const PAGE_TIMEOUT_MS = 20_000;

/** Opens `url` in a new page as a user does and waits until its live stream is on. */
export async function openLivePage(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 760 } });
  page.setDefaultTimeout(PAGE_TIMEOUT_MS);
  await page.goto(url);
  await page.waitForSelector('.live-status[data-live="on"]');
  return page;
}

/**
 * The status of a GET of `path` from `host`:`port` that claims another name in its Host header
 * (`evil.example`), as a page reached by DNS rebinding would send it.
 */
export function statusForForeignHost(host: string, port: string | number, path: string) {
  return new Promise<number>((resolve, reject) => {
    request({ host, port, path, headers: { Host: `evil.example:${port}` } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on('error', reject)
      .end();
  });
}

/** A fresh chroot on the run's ZooKeeper; `connect` opens clients inside it. */
export async function zkNamespace(server: string) {
  const { chroot } = await freshChroot(server, 'dash');
  const clients: Coordinator[] = [];
  return {
    chroot,
    async connect(via = server): Promise<Coordinator> {
      const c = await connectZk(`${via}${chroot}`, { sessionTimeoutMs: 6000 });
      clients.push(c);
      return c;
    },
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()));
    },
  };
}

/** Polls `check` until it returns a value other than undefined (or throws after `ms`). */
export async function eventually<T>(check: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface SseEvent {
  event: string;
  data: unknown;
}

/** Reads a server-sent event stream with fetch; `next(pred)` waits for a matching event. */
export async function openEventStream(url: string, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  const seen: SseEvent[] = [];
  const waiters: { pred: (e: SseEvent) => boolean; resolve: (e: SseEvent) => void }[] = [];
  let ended = false;
  const pump = async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buf = '';
    try {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let cut = buf.indexOf('\n\n');
        while (cut >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          cut = buf.indexOf('\n\n');
          let event = 'message';
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (!data) continue;
          const e = { event, data: JSON.parse(data) as unknown };
          seen.push(e);
          for (const w of [...waiters])
            if (w.pred(e)) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(e);
            }
        }
      }
    } catch {
      // Aborted by close().
    } finally {
      ended = true;
    }
  };
  void pump();
  return {
    status: res.status,
    seen,
    get ended() {
      return ended;
    },
    next(pred: (e: SseEvent) => boolean, ms = 10_000): Promise<SseEvent> {
      const found = seen.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching event within ${ms} ms`)), ms);
        waiters.push({
          pred,
          resolve: (e) => {
            clearTimeout(timer);
            resolve(e);
          },
        });
      });
    },
    close: () => abort.abort(),
  };
}

/** Whether an event is a task event of `type` for the task named `name` (top level). */
export const taskEvent = (type: string, key: string[]) => (e: SseEvent) => {
  const d = e.data as { type?: string; key?: string[] };
  return e.event === 'task' && d.type === type && d.key?.join('|') === key.join('|');
};
