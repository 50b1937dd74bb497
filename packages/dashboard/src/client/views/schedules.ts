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

  const render = (data: ScheduleData) => {
    replace(
      schedules,
      data.schedules.length === 0
        ? h('p', { class: 'muted' }, 'No schedule in this world (zoott schedule add).')
        : table(
            ['Schedule', 'Cron', 'Time zone', 'Type', 'Next tick', 'Last tick'],
            data.schedules.map((schedule) =>
              h(
                'tr',
                { 'data-schedule': schedule.name },
                h('td', {}, h('strong', {}, schedule.name)),
                h('td', { class: 'mono' }, schedule.cron),
                h('td', {}, schedule.tz ?? 'UTC'),
                h('td', {}, schedule.type),
                h('td', {}, time(schedule.nextTick)),
                h('td', {}, time(schedule.lastTick)),
              ),
            ),
          ),
      h(
        'p',
        { class: 'muted note', 'data-field': 'scheduler' },
        data.scheduler === null
          ? 'No scheduler: no worker runs in this world, so no tick is queued.'
          : `Scheduler: ${data.scheduler} (elected among the live workers; another takes over when its session ends).`,
      ),
    );
    replace(
      limits,
      data.limits.length === 0
        ? h(
            'p',
            { class: 'muted' },
            'No rate limit in this world (zoott limit <world> <type> 20/s).',
          )
        : table(
            ['Type', 'Limit', 'Workers sharing it', 'Each'],
            data.limits.map((limit) =>
              h(
                'tr',
                { 'data-limit': limit.type },
                h('td', {}, h('strong', {}, limit.type)),
                h('td', {}, limit.rate),
                h('td', {}, String(limit.workers)),
                h(
                  'td',
                  {},
                  limit.perWorkerPerSecond === null ? '-' : `${limit.perWorkerPerSecond}/s`,
                ),
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
