import { api, encodeKey, type FailedList, type TaskKey } from '../api.js';
import { element, errorLine, replace, serial, throttle, time } from '../dom.js';
import { errorText, href, taskAction, type View, type ViewContext } from './view.js';

/** The dead-letter list, with retry, retry-all and cancel (none of them when read-only). */
export function failedView(ctx: ViewContext): View {
  const head = element('div', { class: 'toolbar' }, element('h2', {}, 'Failed'));
  const table = element('div', { class: 'table-wrap' });
  const el = element('section', { class: 'page failed' }, head, table);
  const retryAll = element('button', { type: 'button', 'data-action': 'retry-all' }, 'Retry all');
  retryAll.addEventListener('click', async () => {
    retryAll.disabled = true;
    try {
      const result = await api.retryAll(ctx.world);
      ctx.notify(
        `retried ${result.retried} task(s)${result.errors.length ? `, ${result.errors.length} refused` : ''}`,
        result.errors.length ? 'error' : 'info',
      );
    } catch (err) {
      ctx.notify(`retry all failed: ${errorText(err)}`, 'error');
    } finally {
      retryAll.disabled = false;
    }
    await refresh();
  });
  if (!ctx.readOnly) head.appendChild(retryAll);

  const act = (what: string, key: TaskKey, run: () => Promise<unknown>) =>
    taskAction(ctx, what, key, run, refresh);

  const render = (list: FailedList) => {
    retryAll.hidden = list.total === 0;
    if (list.total === 0)
      return replace(table, element('p', { class: 'muted' }, 'No failed task.'));
    replace(
      table,
      list.total > list.tasks.length
        ? element(
            'p',
            { class: 'muted' },
            `Showing the ${list.tasks.length} most recent of ${list.total}.`,
          )
        : null,
      element(
        'table',
        {},
        element(
          'thead',
          {},
          element(
            'tr',
            {},
            ['Task', 'Type', 'Attempts', 'Error', 'Failed at', ctx.readOnly ? null : '']
              .filter((x) => x !== null)
              .map((t) => element('th', {}, t)),
          ),
        ),
        element(
          'tbody',
          {},
          list.tasks.map((task) =>
            element(
              'tr',
              { 'data-key': encodeKey(task.key) },
              element(
                'td',
                {},
                element('a', { href: href(ctx.world, 'task', task.key) }, encodeKey(task.key)),
              ),
              element('td', {}, task.type),
              element('td', {}, String(task.attempts)),
              element(
                'td',
                { class: 'error' },
                errorLine(task.error?.code, task.error?.message ?? ''),
              ),
              element('td', {}, time(task.failedAt)),
              ctx.readOnly
                ? null
                : element(
                    'td',
                    { class: 'row-actions' },
                    element(
                      'button',
                      {
                        type: 'button',
                        'data-action': 'retry',
                        onclick: () =>
                          void act('retried', task.key, () => api.retry(ctx.world, task.key)),
                      },
                      'Retry',
                    ),
                    element(
                      'button',
                      {
                        type: 'button',
                        class: 'danger',
                        'data-action': 'cancel',
                        onclick: () =>
                          void act('cancelled', task.key, () => api.cancel(ctx.world, task.key)),
                      },
                      'Cancel',
                    ),
                  ),
            ),
          ),
        ),
      ),
    );
  };

  const refresh = serial(async () => render(await api.failed(ctx.world)));
  const soon = throttle(refresh, 300);
  return { el, refresh, onTask: soon };
}
