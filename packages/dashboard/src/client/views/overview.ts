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

  const render = (overview: Overview) => {
    last = overview;
    replace(
      cards,
      STATES.map((state) =>
        h(
          'div',
          { class: `card state-${state}`, 'data-count': state },
          h('div', { class: 'card-label' }, state),
          h('div', { class: 'card-value' }, String(overview.counts[state])),
        ),
      ),
    );
    renderFacts(overview);
    replace(chart, throughputChart(overview));
    replace(
      worlds,
      overview.worlds.length === 0
        ? h('p', { class: 'muted' }, 'No world yet.')
        : h(
            'ul',
            {},
            overview.worlds.map((world) =>
              h(
                'li',
                {},
                h(
                  'a',
                  {
                    href: href(world, 'overview'),
                    class: world === overview.world ? 'current' : '',
                  },
                  world,
                ),
              ),
            ),
          ),
    );
  };

  const renderFacts = (overview: Overview) => {
    const age = overview.oldestPending
      ? overview.oldestPending.ageMs + (Date.now() - overview.now)
      : null;
    replace(
      facts,
      h(
        'dl',
        {},
        h('dt', {}, 'Oldest pending'),
        h(
          'dd',
          { 'data-fact': 'oldest' },
          overview.oldestPending
            ? [
                duration(age ?? 0),
                ' ',
                h(
                  'a',
                  { href: href(overview.world, 'task', overview.oldestPending.key) },
                  encodeKey(overview.oldestPending.key),
                ),
              ]
            : 'none',
        ),
        h('dt', {}, 'Live workers'),
        h('dd', {}, h('a', { href: href(overview.world, 'workers') }, String(overview.workers))),
        h('dt', {}, 'ZooKeeper'),
        h('dd', {}, overview.zookeeper),
        h('dt', {}, 'Claiming'),
        h(
          'dd',
          { 'data-fact': 'paused' },
          pausedText(overview.paused),
          ' ',
          pauseButton(ctx, overview, refresh),
        ),
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

function throughputChart(overview: Overview): SVGElement {
  const slots = overview.throughput.slots;
  const max = Math.max(1, ...slots.map((s) => s.completed + s.failed));
  const root = svg('svg', {
    viewBox: `0 0 ${CHART_W} ${CHART_H + 18}`,
    class: 'throughput',
    role: 'img',
    'aria-label': 'completed and failed tasks per slot',
  });
  const bw = CHART_W / slots.length;
  slots.forEach((slot, index) => {
    const left = index * bw + 1;
    const hc = (slot.completed / max) * CHART_H;
    const hf = (slot.failed / max) * CHART_H;
    const title = `${new Date(slot.t).toLocaleTimeString()}: ${slot.completed} completed, ${slot.failed} failed`;
    const bar = (top: number, height: number, cls: string) => {
      if (height <= 0) return;
      const rect = svg('rect', { x: left, y: top, width: bw - 2, height, class: cls });
      const titleElement = svg('title');
      titleElement.textContent = title;
      rect.appendChild(titleElement);
      root.appendChild(rect);
    };
    bar(CHART_H - hc, hc, 'bar-completed');
    bar(CHART_H - hc - hf, hf, 'bar-failed');
  });
  root.appendChild(
    svg('line', { x1: 0, y1: CHART_H + 0.5, x2: CHART_W, y2: CHART_H + 0.5, class: 'axis' }),
  );
  const label = (left: number, text: string, anchor: string) => {
    const labelElement = svg('text', {
      x: left,
      y: CHART_H + 14,
      'text-anchor': anchor,
      class: 'axis-label',
    });
    labelElement.textContent = text;
    root.appendChild(labelElement);
  };
  label(0, `-${Math.round((slots.length * overview.throughput.slotMs) / 60_000)} min`, 'start');
  label(CHART_W, 'now', 'end');
  const peak = svg('text', { x: 2, y: 10, class: 'axis-label' });
  peak.textContent = `max ${max}`;
  root.appendChild(peak);
  return root;
}
