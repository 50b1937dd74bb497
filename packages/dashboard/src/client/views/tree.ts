import { api, type EngineEvent, encodeKey, type TaskKey, type TreeNode } from '../api.js';
import { h, replace, sequence, throttle } from '../dom.js';
import { errorText, href, STATES, type View, type ViewContext } from './view.js';

type State = (typeof STATES)[number];
type Counts = Record<State, number>;

/** A tree node as the page keeps it: parent link, depth and counts of its subtree. */
interface Item {
  key: TaskKey;
  enc: string;
  name: string;
  type: string;
  state: State | null;
  parent: Item | null;
  depth: number;
  children: Item[];
  /** States of this node and everything below it. */
  counts: Counts;
}

const ROW_H = 26;
/** Rows drawn above and below the visible window, so fast scrolling shows no gaps. */
const OVERSCAN = 15;
/** Trees up to this size open fully at first; bigger ones show two levels. */
const OPEN_ALL_BELOW = 2000;

const EVENT_STATE: Record<string, State> = {
  queued: 'pending',
  retried: 'pending',
  started: 'working',
  completed: 'completed',
  failed: 'failed',
};

const zero = (): Counts => ({ pending: 0, working: 0, completed: 0, failed: 0 });

/**
 * The task tree of a world: coloured by state, collapsible, searchable by name or type, with
 * counts per subtree. Only the rows in view exist in the DOM, so 10,000+ nodes stay quick.
 */
export function treeView(ctx: ViewContext): View {
  const index = new Map<string, Item>();
  let roots: Item[] = [];
  let rows: Item[] = [];
  const toggled = new Map<string, boolean>();
  let mode: 'auto' | 'all' | 'none' = 'auto';
  let query = '';

  const search = h('input', {
    type: 'search',
    class: 'search',
    placeholder: 'Search name or type…',
    'aria-label': 'search tasks by name or type',
  });
  const summary = h('span', { class: 'muted tree-summary' });
  const spacer = h('div', { class: 'tree-spacer' });
  const rowsEl = h('div', { class: 'tree-rows' });
  const scroller = h('div', { class: 'tree-scroll', tabindex: 0 }, spacer, rowsEl);
  const el = h(
    'section',
    { class: 'page tree' },
    h(
      'div',
      { class: 'toolbar' },
      h('h2', {}, 'Task tree'),
      search,
      h('button', { type: 'button', onclick: () => setMode('all') }, 'Expand all'),
      h('button', { type: 'button', onclick: () => setMode('none') }, 'Collapse all'),
      summary,
    ),
    h(
      'div',
      { class: 'legend' },
      STATES.map((s) =>
        h('span', { class: `legend-item state-${s}` }, h('span', { class: 'dot' }), s),
      ),
    ),
    scroller,
  );

  const setMode = (m: 'all' | 'none') => {
    mode = m;
    toggled.clear();
    relayout();
  };

  const isOpen = (n: Item) => {
    const t = toggled.get(n.enc);
    if (t !== undefined) return t;
    if (mode !== 'auto') return mode === 'all';
    return index.size <= OPEN_ALL_BELOW || n.depth < 1;
  };

  // ---- model ----
  const build = (t: TreeNode, parent: Item | null): Item => {
    const item: Item = {
      key: t.key,
      enc: encodeKey(t.key),
      name: t.name,
      type: t.type,
      state: t.state,
      parent,
      depth: t.key.length - 1,
      children: [],
      counts: zero(),
    };
    if (item.state) item.counts[item.state]++;
    index.set(item.enc, item);
    for (const c of t.children) {
      const child = build(c, item);
      item.children.push(child);
      for (const s of STATES) item.counts[s] += child.counts[s];
    }
    return item;
  };

  const forget = (n: Item) => {
    index.delete(n.enc);
    for (const c of n.children) forget(c);
  };

  const setState = (n: Item, state: State | null) => {
    if (n.state === state) return;
    for (let a: Item | null = n; a; a = a.parent) {
      if (n.state) a.counts[n.state]--;
      if (state) a.counts[state]++;
    }
    n.state = state;
  };

  // ---- layout: which rows are visible ----
  const relayout = () => {
    const out: Item[] = [];
    const q = query.trim().toLowerCase();
    let shown: Set<Item> | null = null;
    if (q) {
      shown = new Set();
      for (const n of index.values()) {
        if (n.name.toLowerCase().includes(q) || n.type.toLowerCase().includes(q))
          for (let a: Item | null = n; a && !shown.has(a); a = a.parent) shown.add(a);
      }
    }
    const walk = (list: Item[]) => {
      for (const n of list) {
        if (shown && !shown.has(n)) continue;
        out.push(n);
        if (n.children.length > 0 && (shown || isOpen(n))) walk(n.children);
      }
    };
    walk(roots);
    rows = out;
    spacer.style.height = `${rows.length * ROW_H}px`;
    draw();
  };

  // ---- drawing: only the window in view ----
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
      replace(rowsEl, slice.map(row));
      const total = zero();
      for (const r of roots) for (const s of STATES) total[s] += r.counts[s];
      const matching = query.trim() ? ` · ${rows.length} rows match` : '';
      summary.textContent = `${index.size} tasks · ${STATES.map((s) => `${total[s]} ${s}`).join(' · ')}${matching}`;
    });
  };

  const row = (n: Item) => {
    const hasKids = n.children.length > 0;
    const open = hasKids && (query.trim() !== '' || isOpen(n));
    const r = h(
      'div',
      {
        class: `row state-${n.state ?? 'none'}`,
        'data-key': n.enc,
        'data-state': n.state ?? 'none',
        role: 'treeitem',
      },
      hasKids
        ? h(
            'button',
            {
              type: 'button',
              class: 'toggle',
              'aria-label': open ? 'collapse' : 'expand',
              'aria-expanded': open ? 'true' : 'false',
              onclick: () => {
                toggled.set(n.enc, !open);
                relayout();
              },
            },
            open ? '▾' : '▸',
          )
        : h('span', { class: 'toggle' }),
      h('span', { class: 'dot', title: n.state ?? 'no state' }),
      h('a', { class: 'name', href: href(ctx.world, 'task', n.key) }, n.name),
      h('span', { class: 'type' }, n.type),
      h('span', { class: 'state-label' }, n.state ?? 'no state'),
      hasKids
        ? h(
            'span',
            { class: 'subcounts', title: 'states in this subtree' },
            STATES.filter((s) => n.counts[s] > 0).map((s) =>
              h('span', { class: `chip state-${s}`, title: s }, String(n.counts[s])),
            ),
          )
        : null,
    );
    r.style.paddingLeft = `${8 + n.depth * 20}px`;
    return r;
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

  // ---- data ----
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
      for (const r of missed) dirtyRoots.add(r);
      if (missed.size > 0) rereadRoots();
      missed.clear();
      relayout();
    }
  };

  const inOrder = sequence();
  const refresh = () =>
    inOrder(() =>
      readTracked(async () => {
        const tree = await api.tree(ctx.world);
        index.clear();
        roots = tree.map((t) => build(t, null));
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
    const old = index.get(name);
    if (old) forget(old);
    roots = roots.filter((r) => r.enc !== name);
    if (!rec) return;
    const item = build(
      { key: [name], name, type: rec.type, state: rec.state, children: below },
      null,
    );
    const at = roots.findIndex((r) => r.name > name);
    if (at < 0) roots.push(item);
    else roots.splice(at, 0, item);
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

  const onTask = (e: EngineEvent) => {
    if (reading) missed.add(e.key[0]!);
    const n = index.get(encodeKey(e.key));
    const state = EVENT_STATE[e.type];
    if (!n || !state) {
      dirtyRoots.add(e.key[0]!);
      rereadRoots();
      return;
    }
    // Same rows, new colours and counts: redraw the window only.
    setState(n, state);
    draw();
  };

  return {
    el,
    refresh,
    onTask,
    dispose: () => window.removeEventListener('resize', onResize),
  };
}
