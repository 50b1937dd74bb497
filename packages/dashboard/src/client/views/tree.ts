import { api, type EngineEvent } from '../api.js';
import { element, replace, sequence, throttle } from '../dom.js';
import { type Item, stateAfter, TreeModel } from './tree-model.js';
import { errorText, href, STATES, type View, type ViewContext } from './view.js';

const ROW_H = 26;
/** Rows drawn above and below the visible window, so fast scrolling shows no gaps. */
const OVERSCAN = 15;

/**
 * The task tree of a world: coloured by state, collapsible, searchable by name or type, with
 * counts per subtree. Only the rows in view exist in the DOM, so 10,000+ nodes stay quick.
 * The tree itself (counts, open rows, search) is the {@link TreeModel}; this draws it.
 */
export function treeView(ctx: ViewContext): View {
  const model = new TreeModel();
  let rows: Item[] = [];
  let query = '';

  const search = element('input', {
    type: 'search',
    class: 'search',
    placeholder: 'Search name or type…',
    'aria-label': 'search tasks by name or type',
  });
  const summary = element('span', { class: 'muted tree-summary' });
  const spacer = element('div', { class: 'tree-spacer' });
  const rowsEl = element('div', { class: 'tree-rows' });
  const scroller = element('div', { class: 'tree-scroll', tabindex: 0 }, spacer, rowsEl);
  const setMode = (mode: 'all' | 'none') => {
    model.setMode(mode);
    relayout();
  };
  const el = element(
    'section',
    { class: 'page tree' },
    element(
      'div',
      { class: 'toolbar' },
      element('h2', {}, 'Task tree'),
      search,
      element('button', { type: 'button', onclick: () => setMode('all') }, 'Expand all'),
      element('button', { type: 'button', onclick: () => setMode('none') }, 'Collapse all'),
      summary,
    ),
    element(
      'div',
      { class: 'legend' },
      STATES.map((state) =>
        element(
          'span',
          { class: `legend-item state-${state}` },
          element('span', { class: 'dot' }),
          state,
        ),
      ),
    ),
    scroller,
  );

  // Which rows are visible changed: a new list, then the window in view.
  const relayout = () => {
    rows = model.rows(query);
    spacer.style.height = `${rows.length * ROW_H}px`;
    draw();
  };

  // Drawing: only the window in view, once per animation frame.
  let frame = 0;
  const draw = () => {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      const top = scroller.scrollTop;
      const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
      const count = Math.ceil((scroller.clientHeight || 600) / ROW_H) + 2 * OVERSCAN;
      const slice = rows.slice(first, first + count);
      rowsEl.style.transform = `translateY(${first * ROW_H}px)`;
      const searching = query.trim() !== '';
      replace(
        rowsEl,
        slice.map((item) => {
          const open = item.children.length > 0 && (searching || model.isOpen(item));
          return treeRow(ctx.world, item, open, () => {
            model.toggle(item, !open);
            relayout();
          });
        }),
      );
      const total = model.totals();
      const matching = searching ? ` · ${rows.length} rows match` : '';
      summary.textContent = `${model.size} tasks · ${STATES.map((s) => `${total[s]} ${s}`).join(' · ')}${matching}`;
    });
  };

  scroller.addEventListener('scroll', draw, { passive: true });
  const onResize = () => draw();
  window.addEventListener('resize', onResize);
  let searchTimer: ReturnType<typeof setTimeout> | null = null;
  search.addEventListener('input', () => {
    if (searchTimer) clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      query = search.value;
      scroller.scrollTop = 0;
      relayout();
    }, 120);
  });

  const sync = treeSync(ctx, model, { relayout, draw });
  return {
    el,
    refresh: sync.refresh,
    onTask: sync.onTask,
    dispose: () => window.removeEventListener('resize', onResize),
  };
}

/** One row of the tree: toggle, state dot, name (a link to the task), type, state, counts. */
function treeRow(world: string, item: Item, open: boolean, onToggle: () => void): HTMLElement {
  const hasKids = item.children.length > 0;
  const row = element(
    'div',
    {
      class: `row state-${item.state ?? 'none'}`,
      'data-key': item.enc,
      'data-state': item.state ?? 'none',
      role: 'treeitem',
    },
    hasKids
      ? element(
          'button',
          {
            type: 'button',
            class: 'toggle',
            'aria-label': open ? 'collapse' : 'expand',
            'aria-expanded': open ? 'true' : 'false',
            onclick: onToggle,
          },
          open ? '▾' : '▸',
        )
      : element('span', { class: 'toggle' }),
    element('span', { class: 'dot', title: item.state ?? 'no state' }),
    element('a', { class: 'name', href: href(world, 'task', item.key) }, item.name),
    element('span', { class: 'type' }, item.type),
    element('span', { class: 'state-label' }, item.state ?? 'no state'),
    hasKids
      ? element(
          'span',
          { class: 'subcounts', title: 'states in this subtree' },
          STATES.filter((state) => item.counts[state] > 0).map((state) =>
            element(
              'span',
              { class: `chip state-${state}`, title: state },
              String(item.counts[state]),
            ),
          ),
        )
      : null,
  );
  row.style.paddingLeft = `${8 + item.depth * 20}px`;
  return row;
}

/**
 * Keeps the model in step with the server: a full read on refresh, and per event either a
 * new state (same rows: redraw) or a re-read of the root whose subtree changed shape.
 */
function treeSync(
  ctx: ViewContext,
  model: TreeModel,
  view: { relayout(): void; draw(): void },
): Pick<View, 'refresh'> & { onTask(event: EngineEvent): void } {
  // Reads run one at a time (`sequence`). An event that arrives while a read is on the wire may
  // not be in its answer, which then overwrites the event's effect: such roots are re-read
  // once the read is in.
  let reading = false;
  const missed = new Set<string>();
  const dirtyRoots = new Set<string>();
  const readTracked = async (read: () => Promise<void>) => {
    reading = true;
    missed.clear();
    try {
      await read();
    } finally {
      reading = false;
      for (const root of missed) dirtyRoots.add(root);
      if (missed.size > 0) rereadRoots();
      missed.clear();
      view.relayout();
    }
  };

  const inOrder = sequence();
  const refresh = () =>
    inOrder(() =>
      readTracked(async () => {
        model.load(await api.tree(ctx.world));
      }),
    );

  /** Re-reads one root's subtree (after it gained or lost nodes): the root's record plus below. */
  const rereadRoot = async (name: string) => {
    const [rec, below] = await Promise.all([
      api
        .task(ctx.world, [name])
        .catch((err) => (err?.status === 404 ? null : Promise.reject(err))),
      api.tree(ctx.world, name),
    ]);
    model.replaceRoot(
      name,
      rec ? { key: [name], name, type: rec.type, state: rec.state, children: below } : null,
    );
  };

  const rereadRoots = throttle(
    () =>
      inOrder(() =>
        readTracked(async () => {
          const names = [...dirtyRoots];
          dirtyRoots.clear();
          for (const name of names) {
            try {
              await rereadRoot(name);
            } catch (err) {
              ctx.notify(`tree update failed: ${errorText(err)}`, 'error');
            }
          }
        }),
      ),
    300,
  );

  const onTask = (event: EngineEvent) => {
    if (reading) missed.add(event.key[0]!);
    const item = model.get(event.key);
    const state = stateAfter(event.type);
    if (!item || !state) {
      dirtyRoots.add(event.key[0]!);
      rereadRoots();
      return;
    }
    // Same rows, new colours and counts: redraw the window only.
    model.setState(item, state);
    view.draw();
  };

  return { refresh, onTask };
}
