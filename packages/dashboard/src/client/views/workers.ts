import { api, type WorkerView } from '../api.js';
import { duration, h, replace, serial, throttle, time } from '../dom.js';
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
  const table = h('div', { class: 'table-wrap' });
  const el = h('section', { class: 'page workers' }, h('h2', {}, 'Workers'), table);

  const render = (workers: WorkerView[]) => {
    if (workers.length === 0)
      return replace(
        table,
        h('p', { class: 'muted' }, 'No live worker is registered in this world.'),
      );
    const now = Date.now();
    replace(
      table,
      h(
        'table',
        {},
        h(
          'thead',
          {},
          h(
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
            ].map((t) => h('th', {}, t)),
          ),
        ),
        h(
          'tbody',
          {},
          workers.map((worker) =>
            h(
              'tr',
              { 'data-worker': worker.id ?? worker.node },
              h(
                'td',
                {},
                h('strong', {}, worker.id ?? '?'),
                h('div', { class: 'muted', title: worker.node }, shownNode(worker.node)),
              ),
              h(
                'td',
                {},
                worker.host ?? '-',
                worker.pid ? h('div', { class: 'muted' }, `pid ${worker.pid}`) : null,
              ),
              h('td', {}, (worker.types ?? []).join(', ') || '-'),
              h(
                'td',
                { title: `${worker.buckets?.length ?? 0} buckets` },
                ranges(worker.buckets ?? []),
              ),
              h(
                'td',
                { 'data-field': 'running' },
                worker.running.length === 0
                  ? h('span', { class: 'muted' }, 'idle')
                  : worker.running.map((key) =>
                      h('div', {}, h('a', { href: href(ctx.world, 'task', key) }, key.join('|'))),
                    ),
              ),
              h(
                'td',
                {},
                h('span', { class: 'badge state-completed' }, 'live'),
                h('div', { class: 'muted mono' }, worker.session ?? '-'),
              ),
              h(
                'td',
                {},
                time(worker.registered),
                h('div', { class: 'muted' }, `${duration(now - worker.registered)} ago`),
              ),
              h('td', {}, time(worker.updated)),
            ),
          ),
        ),
      ),
      h(
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
