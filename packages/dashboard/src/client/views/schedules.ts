import { api, type ScheduleData } from '../api.js';
import { element, replace, serial, throttle, time } from '../dom.js';
import type { View, ViewContext } from './view.js';

const table = (head: readonly string[], rows: HTMLTableRowElement[]) =>
  element(
    'table',
    {},
    element(
      'thead',
      {},
      element(
        'tr',
        {},
        head.map((t) => element('th', {}, t)),
      ),
    ),
    element('tbody', {}, rows),
  );

/** The world's cron schedules with the elected scheduler, and its cluster-wide rate limits. */
export function schedulesView(ctx: ViewContext): View {
  const schedules = element('div', { class: 'table-wrap schedules' });
  const limits = element('div', { class: 'table-wrap limits' });
  const el = element(
    'section',
    { class: 'page schedules-page' },
    element('h2', {}, 'Schedules'),
    schedules,
    element('h2', {}, 'Rate limits'),
    limits,
  );

  const render = (data: ScheduleData) => {
    replace(
      schedules,
      data.schedules.length === 0
        ? element('p', { class: 'muted' }, 'No schedule in this world (zoott schedule add).')
        : table(
            ['Schedule', 'Cron', 'Time zone', 'Type', 'Next tick', 'Last tick'],
            data.schedules.map((schedule) =>
              element(
                'tr',
                { 'data-schedule': schedule.name },
                element('td', {}, element('strong', {}, schedule.name)),
                element('td', { class: 'mono' }, schedule.cron),
                element('td', {}, schedule.tz ?? 'UTC'),
                element('td', {}, schedule.type),
                element('td', {}, time(schedule.nextTick)),
                element('td', {}, time(schedule.lastTick)),
              ),
            ),
          ),
      element(
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
        ? element(
            'p',
            { class: 'muted' },
            'No rate limit in this world (zoott limit <world> <type> 20/s).',
          )
        : table(
            ['Type', 'Limit', 'Workers sharing it', 'Each'],
            data.limits.map((limit) =>
              element(
                'tr',
                { 'data-limit': limit.type },
                element('td', {}, element('strong', {}, limit.type)),
                element('td', {}, limit.rate),
                element('td', {}, String(limit.workers)),
                element(
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
