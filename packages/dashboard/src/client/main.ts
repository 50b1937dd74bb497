import './app.css';
import { api, type Config, pageReadOnly, pageWorld } from './api.js';
import { element, replace } from './dom.js';
import { LiveConnection, type LiveStatus } from './live.js';
import { failedView } from './views/failed.js';
import { overviewView } from './views/overview.js';
import { schedulesView } from './views/schedules.js';
import { taskView } from './views/task.js';
import { treeView } from './views/tree.js';
import { errorText, href, type View, type ViewContext } from './views/view.js';
import { workersView } from './views/workers.js';

const PAGES = [
  ['overview', 'Overview'],
  ['tree', 'Tree'],
  ['workers', 'Workers'],
  ['failed', 'Failed'],
  ['schedules', 'Schedules'],
] as const;

interface Route {
  world: string | null;
  page: string;
  key: string[] | null;
}

/** `#/<world>/<page>` or `#/<world>/task/<a|b|c>`. */
function parseHash(): Route {
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  const [world, page, key] = parts;
  return {
    world: world || null,
    page: page || 'overview',
    key: page === 'task' && key ? key.split('|') : null,
  };
}

class App {
  private config: Config = { readOnly: pageReadOnly, world: null, worlds: [], zookeeper: '' };
  private world: string | null = null;
  private view: View | null = null;
  private live: LiveConnection | null = null;
  private readonly worldSelect = element('select', { 'aria-label': 'world' });
  private readonly nav = element('nav', { class: 'tabs' });
  private readonly status = element(
    'span',
    { class: 'live-status', 'data-live': 'off' },
    'connecting…',
  );
  private readonly toast = element('div', { class: 'toast', role: 'status', hidden: true });
  private readonly main = element('main', {});
  private toastTimer: ReturnType<typeof setTimeout> | null = null;

  async start(root: HTMLElement): Promise<void> {
    replace(
      root,
      element(
        'header',
        {},
        element('h1', {}, element('span', { class: 'logo' }, 'zoott'), ' dashboard'),
        this.worldSelect,
        this.nav,
        element('span', { class: 'spacer' }),
        pageReadOnly ? element('span', { class: 'badge read-only' }, 'read-only') : null,
        this.status,
      ),
      this.toast,
      this.main,
    );
    this.worldSelect.addEventListener('change', () => {
      location.hash = href(
        this.worldSelect.value,
        parseHash().page === 'task' ? 'tree' : parseHash().page,
      );
    });
    window.addEventListener('hashchange', () => void this.route());
    await this.loadConfig();
    await this.route();
  }

  private async loadConfig(): Promise<void> {
    try {
      this.config = await api.config();
    } catch (err) {
      this.notify(`cannot reach the dashboard server: ${errorText(err)}`, 'error');
    }
    const { worlds } = this.config;
    replace(
      this.worldSelect,
      worlds.map((w) => element('option', { value: w }, w)),
    );
  }

  private async route(): Promise<void> {
    const route = parseHash();
    const world = route.world ?? (pageWorld || this.config.world);
    if (!world) {
      this.show(
        null,
        element(
          'section',
          { class: 'page' },
          element('h2', {}, 'No world yet'),
          element(
            'p',
            {},
            'Nothing is initialised in this namespace. Queue a task (zoott queue …) and this page picks it up.',
          ),
        ),
      );
      setTimeout(() => void this.loadConfig().then(() => this.route()), 3000);
      return;
    }
    if (!route.world) {
      location.replace(href(world, 'overview'));
      return;
    }
    if (!this.config.worlds.includes(world)) await this.loadConfig();
    this.worldSelect.value = world;
    replace(
      this.nav,
      PAGES.map(([page, label]) =>
        element(
          'a',
          { href: href(world, page), class: page === route.page ? 'active' : '' },
          label,
        ),
      ),
    );
    const ctx: ViewContext = {
      world,
      readOnly: this.config.readOnly || pageReadOnly,
      notify: (m, k) => this.notify(m, k),
    };
    const view =
      route.page === 'task' && route.key
        ? taskView(ctx, route.key)
        : route.page === 'tree'
          ? treeView(ctx)
          : route.page === 'workers'
            ? workersView(ctx)
            : route.page === 'failed'
              ? failedView(ctx)
              : route.page === 'schedules'
                ? schedulesView(ctx)
                : overviewView(ctx);
    this.show(view, view.el);
    if (world !== this.world) this.connect(world);
    await this.load(view);
  }

  private show(view: View | null, el: HTMLElement): void {
    this.view?.dispose?.();
    this.view = view;
    replace(this.main, el);
  }

  private async load(view: View): Promise<void> {
    try {
      await view.refresh();
    } catch (err) {
      if (this.view === view) this.notify(errorText(err), 'error');
    }
  }

  private connect(world: string): void {
    this.live?.close();
    this.world = world;
    this.live = new LiveConnection(world, {
      task: (e) => this.view?.onTask?.(e),
      workers: () => this.view?.onWorkers?.(),
      resync: () => {
        if (this.view) void this.load(this.view);
      },
      status: (s) => this.showStatus(s),
    });
  }

  private showStatus(status: LiveStatus): void {
    const live =
      status.stream === 'live' &&
      (status.zookeeper === 'connected' || status.zookeeper === 'unknown');
    this.status.dataset.live = live ? 'on' : 'off';
    this.status.dataset.stream = status.stream;
    this.status.dataset.zookeeper = status.zookeeper;
    this.status.className = `live-status ${live ? 'ok' : 'warn'}`;
    this.status.textContent =
      status.stream !== 'live'
        ? 'reconnecting…'
        : live
          ? '● live'
          : `ZooKeeper ${status.zookeeper}…`;
  }

  notify(message: string, kind: 'info' | 'error' = 'info'): void {
    this.toast.textContent = message;
    this.toast.className = `toast ${kind}`;
    this.toast.hidden = false;
    if (this.toastTimer) clearTimeout(this.toastTimer);
    this.toastTimer = setTimeout(
      () => {
        this.toast.hidden = true;
      },
      kind === 'error' ? 8000 : 3000,
    );
  }
}

const root = document.getElementById('app');
if (root) void new App().start(root);
