import { api, encodeKey, type Overview } from '../api.js';
import { duration, element, replace, serial, svg, throttle } from '../dom.js';
import { pauseButton, pausedText } from './controls.js';
import { href, STATES, type View, type ViewContext } from './view.js';

const CHART_W = 600;
const CHART_H = 120;

/** Counts per area, throughput of the last minutes, oldest pending age, the worlds present. */
export function overviewView(ctx: ViewContext): View {
  const cards = element('div', { class: 'cards' });
  const facts = element('div', { class: 'facts' });
  const chart = element('div', { class: 'chart' });
  const worlds = element('div', { class: 'worlds' });
  const el = element(
    'section',
    { class: 'page overview' },
    element('h2', {}, 'Overview'),
    cards,
    element(
      'div',
      { class: 'panels' },
      element(
        'div',
        { class: 'panel' },
        element('h3', {}, 'Throughput (completed / failed per 10 s)'),
        chart,
      ),
      element(
        'div',
        { class: 'panel' },
        element('h3', {}, 'Details'),
        facts,
        element('h3', {}, 'Worlds'),
        worlds,
      ),
    ),
  );
  let last: Overview | null = null;

  const render = (overview: Overview) => {
    last = overview;
    replace(cards, stateCards(overview));
    renderFacts(overview);
    replace(chart, throughputChart(overview));
    replace(worlds, worldList(overview));
  };

  const renderFacts = (overview: Overview) => {
    const age = overview.oldestPending
      ? overview.oldestPending.ageMs + (Date.now() - overview.now)
      : null;
    replace(
      facts,
      element(
        'dl',
        {},
        element('dt', {}, 'Oldest pending'),
        element(
          'dd',
          { 'data-fact': 'oldest' },
          overview.oldestPending
            ? [
                duration(age ?? 0),
                ' ',
                element(
                  'a',
                  { href: href(overview.world, 'task', overview.oldestPending.key) },
                  encodeKey(overview.oldestPending.key),
                ),
              ]
            : 'none',
        ),
        element('dt', {}, 'Live workers'),
        element(
          'dd',
          {},
          element('a', { href: href(overview.world, 'workers') }, String(overview.workers)),
        ),
        element('dt', {}, 'ZooKeeper'),
        element('dd', {}, overview.zookeeper),
        element('dt', {}, 'Claiming'),
        element(
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

/** One card per task state, with its count. */
function stateCards(overview: Overview): HTMLElement[] {
  return STATES.map((state) =>
    element(
      'div',
      { class: `card state-${state}`, 'data-count': state },
      element('div', { class: 'card-label' }, state),
      element('div', { class: 'card-value' }, String(overview.counts[state])),
    ),
  );
}

/** The worlds present, each a link to its overview, the one shown marked current. */
function worldList(overview: Overview): HTMLElement {
  if (overview.worlds.length === 0) return element('p', { class: 'muted' }, 'No world yet.');
  return element(
    'ul',
    {},
    overview.worlds.map((world) =>
      element(
        'li',
        {},
        element(
          'a',
          { href: href(world, 'overview'), class: world === overview.world ? 'current' : '' },
          world,
        ),
      ),
    ),
  );
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
