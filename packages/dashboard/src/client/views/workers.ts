import { api, type WorkerView } from '../api.js';
import { duration, element, replace, serial, throttle, time } from '../dom.js';
import { href, type View, type ViewContext } from './view.js';

/** Ranges of bucket numbers, `0-3, 7, 9-10`: 64 numbers in a row would not fit a cell. */
function ranges(nums: readonly number[]): string {
  const sorted = [...nums].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const start = sorted[i]!;
    while (i + 1 < sorted.length && sorted[i + 1] === sorted[i]! + 1) i++;
    out.push(start === sorted[i] ? String(start) : `${start}-${sorted[i]}`);
  }
  return out.join(', ') || '-';
}

/** The registry node name without the adapter's protected-create marker (`worker-0000000003`). */
const shownNode = (node: string) => node.replace(/_p[0-9a-f]{12}_(?=\d{10}$)/, '');

/** The worker registry: host, types, partitions, running tasks, session, registration. */
export function workersView(ctx: ViewContext): View {
  const table = element('div', { class: 'table-wrap' });
  const el = element('section', { class: 'page workers' }, element('h2', {}, 'Workers'), table);

  const render = (workers: WorkerView[]) => {
    if (workers.length === 0)
      return replace(
        table,
        element('p', { class: 'muted' }, 'No live worker is registered in this world.'),
      );
    const now = Date.now();
    replace(
      table,
      element(
        'table',
        {},
        element(
          'thead',
          {},
          element(
            'tr',
            {},
            [
              'Worker',
              'Host',
              'Types',
              'Partitions',
              'Running',
              'Session',
              'Registered',
              'Last update',
            ].map((t) => element('th', {}, t)),
          ),
        ),
        element(
          'tbody',
          {},
          workers.map((worker) =>
            element(
              'tr',
              { 'data-worker': worker.id ?? worker.node },
              element(
                'td',
                {},
                element('strong', {}, worker.id ?? '?'),
                element('div', { class: 'muted', title: worker.node }, shownNode(worker.node)),
              ),
              element(
                'td',
                {},
                worker.host ?? '-',
                worker.pid ? element('div', { class: 'muted' }, `pid ${worker.pid}`) : null,
              ),
              element('td', {}, (worker.types ?? []).join(', ') || '-'),
              element(
                'td',
                { title: `${worker.buckets?.length ?? 0} buckets` },
                ranges(worker.buckets ?? []),
              ),
              element(
                'td',
                { 'data-field': 'running' },
                worker.running.length === 0
                  ? element('span', { class: 'muted' }, 'idle')
                  : worker.running.map((key) =>
                      element(
                        'div',
                        {},
                        element('a', { href: href(ctx.world, 'task', key) }, key.join('|')),
                      ),
                    ),
              ),
              element(
                'td',
                {},
                element('span', { class: 'badge state-completed' }, 'live'),
                element('div', { class: 'muted mono' }, worker.session ?? '-'),
              ),
              element(
                'td',
                {},
                time(worker.registered),
                element('div', { class: 'muted' }, `${duration(now - worker.registered)} ago`),
              ),
              element('td', {}, time(worker.updated)),
            ),
          ),
        ),
      ),
      element(
        'p',
        { class: 'muted note' },
        'A worker is live while its session holds its ephemeral registry node; ZooKeeper heartbeats are per session, so a worker whose session expires leaves this list.',
      ),
    );
  };

  const refresh = serial(async () => render(await api.workers(ctx.world)));
  const soon = throttle(refresh, 500);
  return { el, refresh, onTask: soon, onWorkers: soon };
}
