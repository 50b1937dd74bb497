import { api, encodeKey, type Overview } from '../api.js';
import { duration, h, replace, serial, svg, throttle } from '../dom.js';
import { pauseButton, pausedText } from './controls.js';
import { href, STATES, type View, type ViewContext } from './view.js';

const CHART_W = 600;
const CHART_H = 120;

/** Counts per area, throughput of the last minutes, oldest pending age, the worlds present. */
export function overviewView(ctx: ViewContext): View {
  const cards = h('div', { class: 'cards' });
  const facts = h('div', { class: 'facts' });
  const chart = h('div', { class: 'chart' });
  const worlds = h('div', { class: 'worlds' });
  const el = h(
    'section',
    { class: 'page overview' },
    h('h2', {}, 'Overview'),
    cards,
    h(
      'div',
      { class: 'panels' },
      h('div', { class: 'panel' }, h('h3', {}, 'Throughput (completed / failed per 10 s)'), chart),
      h('div', { class: 'panel' }, h('h3', {}, 'Details'), facts, h('h3', {}, 'Worlds'), worlds),
    ),
  );
  let last: Overview | null = null;

  const render = (o: Overview) => {
    last = o;
    replace(
      cards,
      STATES.map((s) =>
        h(
          'div',
          { class: `card state-${s}`, 'data-count': s },
          h('div', { class: 'card-label' }, s),
          h('div', { class: 'card-value' }, String(o.counts[s])),
        ),
      ),
    );
    renderFacts(o);
    replace(chart, throughputChart(o));
    replace(
      worlds,
      o.worlds.length === 0
        ? h('p', { class: 'muted' }, 'No world yet.')
        : h(
            'ul',
            {},
            o.worlds.map((w) =>
              h(
                'li',
                {},
                h('a', { href: href(w, 'overview'), class: w === o.world ? 'current' : '' }, w),
              ),
            ),
          ),
    );
  };

  const renderFacts = (o: Overview) => {
    const age = o.oldestPending ? o.oldestPending.ageMs + (Date.now() - o.now) : null;
    replace(
      facts,
      h(
        'dl',
        {},
        h('dt', {}, 'Oldest pending'),
        h(
          'dd',
          { 'data-fact': 'oldest' },
          o.oldestPending
            ? [
                duration(age ?? 0),
                ' ',
                h(
                  'a',
                  { href: href(o.world, 'task', o.oldestPending.key) },
                  encodeKey(o.oldestPending.key),
                ),
              ]
            : 'none',
        ),
        h('dt', {}, 'Live workers'),
        h('dd', {}, h('a', { href: href(o.world, 'workers') }, String(o.workers))),
        h('dt', {}, 'ZooKeeper'),
        h('dd', {}, o.zookeeper),
        h('dt', {}, 'Claiming'),
        h('dd', { 'data-fact': 'paused' }, pausedText(o.paused), ' ', pauseButton(ctx, o, refresh)),
      ),
    );
  };

  const refresh = serial(async () => render(await api.overview(ctx.world)));
  const soon = throttle(refresh, 500);
  // The age of the oldest pending task grows by itself; the chart's slots move on.
  const tick = setInterval(() => {
    if (last) renderFacts(last);
  }, 1000);
  const reread = setInterval(soon, 10_000);
  return {
    el,
    refresh,
    onTask: soon,
    onWorkers: soon,
    dispose: () => {
      clearInterval(tick);
      clearInterval(reread);
    },
  };
}

function throughputChart(o: Overview): SVGElement {
  const slots = o.throughput.slots;
  const max = Math.max(1, ...slots.map((s) => s.completed + s.failed));
  const root = svg('svg', {
    viewBox: `0 0 ${CHART_W} ${CHART_H + 18}`,
    class: 'throughput',
    role: 'img',
    'aria-label': 'completed and failed tasks per slot',
  });
  const bw = CHART_W / slots.length;
  slots.forEach((s, i) => {
    const x = i * bw + 1;
    const hc = (s.completed / max) * CHART_H;
    const hf = (s.failed / max) * CHART_H;
    const title = `${new Date(s.t).toLocaleTimeString()}: ${s.completed} completed, ${s.failed} failed`;
    const bar = (y: number, height: number, cls: string) => {
      if (height <= 0) return;
      const r = svg('rect', { x, y, width: bw - 2, height, class: cls });
      const t = svg('title');
      t.textContent = title;
      r.appendChild(t);
      root.appendChild(r);
    };
    bar(CHART_H - hc, hc, 'bar-completed');
    bar(CHART_H - hc - hf, hf, 'bar-failed');
  });
  root.appendChild(
    svg('line', { x1: 0, y1: CHART_H + 0.5, x2: CHART_W, y2: CHART_H + 0.5, class: 'axis' }),
  );
  const label = (x: number, text: string, anchor: string) => {
    const t = svg('text', { x, y: CHART_H + 14, 'text-anchor': anchor, class: 'axis-label' });
    t.textContent = text;
    root.appendChild(t);
  };
  label(0, `-${Math.round((slots.length * o.throughput.slotMs) / 60_000)} min`, 'start');
  label(CHART_W, 'now', 'end');
  const peak = svg('text', { x: 2, y: 10, class: 'axis-label' });
  peak.textContent = `max ${max}`;
  root.appendChild(peak);
  return root;
}
