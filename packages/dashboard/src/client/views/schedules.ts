import { api, type ScheduleData } from '../api.js';
import { h, replace, serial, throttle, time } from '../dom.js';
import type { View, ViewContext } from './view.js';

const table = (head: readonly string[], rows: HTMLTableRowElement[]) =>
  h(
    'table',
    {},
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        head.map((t) => h('th', {}, t)),
      ),
    ),
    h('tbody', {}, rows),
  );

/** The world's cron schedules with the elected scheduler, and its cluster-wide rate limits. */
export function schedulesView(ctx: ViewContext): View {
  const schedules = h('div', { class: 'table-wrap schedules' });
  const limits = h('div', { class: 'table-wrap limits' });
  const el = h(
    'section',
    { class: 'page schedules-page' },
    h('h2', {}, 'Schedules'),
    schedules,
    h('h2', {}, 'Rate limits'),
    limits,
  );

  const render = (d: ScheduleData) => {
    replace(
      schedules,
      d.schedules.length === 0
        ? h('p', { class: 'muted' }, 'No schedule in this world (zoott schedule add).')
        : table(
            ['Schedule', 'Cron', 'Time zone', 'Type', 'Next tick', 'Last tick'],
            d.schedules.map((s) =>
              h(
                'tr',
                { 'data-schedule': s.name },
                h('td', {}, h('strong', {}, s.name)),
                h('td', { class: 'mono' }, s.cron),
                h('td', {}, s.tz ?? 'UTC'),
                h('td', {}, s.type),
                h('td', {}, time(s.nextTick)),
                h('td', {}, time(s.lastTick)),
              ),
            ),
          ),
      h(
        'p',
        { class: 'muted note', 'data-field': 'scheduler' },
        d.scheduler === null
          ? 'No scheduler: no worker runs in this world, so no tick is queued.'
          : `Scheduler: ${d.scheduler} (elected among the live workers; another takes over when its session ends).`,
      ),
    );
    replace(
      limits,
      d.limits.length === 0
        ? h(
            'p',
            { class: 'muted' },
            'No rate limit in this world (zoott limit <world> <type> 20/s).',
          )
        : table(
            ['Type', 'Limit', 'Workers sharing it', 'Each'],
            d.limits.map((l) =>
              h(
                'tr',
                { 'data-limit': l.type },
                h('td', {}, h('strong', {}, l.type)),
                h('td', {}, l.rate),
                h('td', {}, String(l.workers)),
                h('td', {}, l.perWorkerPerSecond === null ? '-' : `${l.perWorkerPerSecond}/s`),
              ),
            ),
          ),
    );
  };

  const refresh = serial(async () => render(await api.schedules(ctx.world)));
  const soon = throttle(refresh, 1000);
  // A tick queues a task and a worker joining or leaving changes the shares: both re-read.
  return { el, refresh, onTask: soon, onWorkers: soon };
}
