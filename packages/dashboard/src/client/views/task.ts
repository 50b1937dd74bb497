import {
  api,
  type EngineEvent,
  encodeKey,
  type TaskKey,
  type TaskProgress,
  type TaskRecord,
} from '../api.js';
import {
  type Child,
  duration,
  errorLine,
  h,
  json,
  replace,
  serial,
  throttle,
  time,
} from '../dom.js';
import { confirmButton } from './controls.js';
import { reportBlock } from './task-report.js';
import { errorText, href, taskAction, type View, type ViewContext } from './view.js';

/**
 * Retry (a failed task), cancel, and cancel with its subtree (the engine refuses a parent
 * alone); two clicks each: a cancel cannot be undone.
 */
function actionButtons(
  t: TaskRecord,
  act: (what: string, run: () => Promise<unknown>) => Promise<void>,
  ctx: ViewContext,
  key: TaskKey,
): Child[] {
  const scope = `${ctx.world}/${key.join('|')}`;
  const cancel = confirmButton(
    'cancel',
    'Cancel task',
    'Click again to cancel',
    () => act('cancelled', () => api.cancel(ctx.world, key)),
    scope,
  );
  const subtree = confirmButton(
    'cancel-subtree',
    'Cancel with subtree',
    'Click again: cancel it and every task below',
    () => act('cancelled with subtree', () => api.cancel(ctx.world, key, true)),
    scope,
  );
  return [
    subtree,
    t.state === 'failed'
      ? h(
          'button',
          {
            type: 'button',
            'data-action': 'retry',
            onclick: () => void act('retried', () => api.retry(ctx.world, key)),
          },
          'Retry',
        )
      : null,
    t.state !== null ? cancel : null,
  ];
}

/** The label and value of each field of a task record the page shows. */
function fieldRows(t: TaskRecord): [string, Child][] {
  const rows: [string, Child][] = [
    ['Type', t.type],
    [
      'State',
      h(
        'span',
        { class: `badge state-${t.state ?? 'none'}`, 'data-field': 'state' },
        t.state ?? 'no state',
      ),
    ],
    ['Attempts', t.maxAttempts ? `${t.attempts} of ${t.maxAttempts}` : String(t.attempts)],
  ];
  if (t.priority !== undefined) rows.push(['Priority', String(t.priority)]);
  if (t.worker)
    rows.push([
      'Worker',
      [
        t.worker.worker,
        t.worker.host ? ` on ${t.worker.host}` : '',
        t.worker.pid ? ` (pid ${t.worker.pid})` : '',
      ].join(''),
    ]);
  if (t.hints) rows.push(['Hints', json(t.hints)]);
  rows.push(['Queued', time(t.queuedAt)]);
  if (t.notBefore) rows.push(['Not before', time(t.notBefore)]);
  if (t.startedAt)
    rows.push([
      'Started',
      `${time(t.startedAt)}${t.queuedAt ? ` (waited ${duration(t.startedAt - t.queuedAt)})` : ''}`,
    ]);
  if (t.completedAt)
    rows.push([
      'Completed',
      `${time(t.completedAt)}${t.startedAt ? ` (ran ${duration(t.completedAt - t.startedAt)})` : ''}`,
    ]);
  if (t.failedAt) rows.push(['Failed', time(t.failedAt)]);
  return rows;
}

/**
 * A task's page body: name and state, its fields, its data, what it reported (progress and
 * log lines), then its error or result.
 */
function taskSections(t: TaskRecord & { report?: TaskProgress | null }): Child[] {
  const sections: Child[] = [
    h(
      'h2',
      {},
      t.name,
      ' ',
      h('span', { class: `badge state-${t.state ?? 'none'}` }, t.state ?? 'no state'),
    ),
    h(
      'dl',
      { class: 'fields' },
      fieldRows(t).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
    ),
    h('h3', {}, 'Data'),
    h(
      'pre',
      { class: 'json', 'data-field': 'data' },
      t.data === undefined ? '(none)' : json(t.data),
    ),
  ];
  sections.push(reportBlock(t.report));
  if (t.error) sections.push(errorBlock('Error', t.error));
  else if (t.lastError) sections.push(errorBlock('Last error (will retry)', t.lastError));
  if (t.state === 'completed') sections.push(resultBlock(t.result));
  return sections;
}

/** A process record of a job result (regular job, or a race's winner). */
interface ProcessResult {
  stdout?: string;
  stderr?: string;
  exit?: number;
  signal?: number;
  truncated?: boolean;
  timedOut?: boolean;
  error?: string;
  server?: string;
  pid?: number;
  started?: string;
  finished?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A job result holds the process outcome at the top (regular) or under `winner` (race). */
function processOf(result: unknown): { proc: ProcessResult | null; race: boolean } | null {
  if (!isObject(result)) return null;
  if ('winner' in result && 'processes' in result)
    return { proc: isObject(result.winner) ? (result.winner as ProcessResult) : null, race: true };
  if ('stdout' in result || 'stderr' in result || 'exit' in result || 'signal' in result)
    return { proc: result as ProcessResult, race: false };
  return null;
}

/** One task: its data, attempts, worker, timings, and its result or error. */
export function taskView(ctx: ViewContext, key: TaskKey): View {
  const body = h('div', { class: 'task-body' });
  const actions = h('div', { class: 'actions' });
  const el = h(
    'section',
    { class: 'page task' },
    h(
      'nav',
      { class: 'crumbs' },
      h('a', { href: href(ctx.world, 'tree') }, ctx.world),
      key.map((name, i) => [
        ' / ',
        h('a', { href: href(ctx.world, 'task', key.slice(0, i + 1)) }, name),
      ]),
    ),
    actions,
    body,
  );

  const act = (what: string, run: () => Promise<unknown>) =>
    taskAction(ctx, what, key, run, refresh);

  const renderActions = (t: TaskRecord | null) =>
    ctx.readOnly || !t ? replace(actions) : replace(actions, ...actionButtons(t, act, ctx, key));

  const refresh = serial(async () => {
    let t: TaskRecord | null = null;
    try {
      t = await api.task(ctx.world, key);
    } catch (err) {
      replace(body, h('p', { class: 'error' }, errorText(err)));
      renderActions(null);
      return;
    }
    replace(body, taskSections(t));
    renderActions(t);
  });
  const soon = throttle(refresh, 200);
  const mine = encodeKey(key);
  return {
    el,
    refresh,
    onTask: (e: EngineEvent) => {
      if (encodeKey(e.key) === mine) soon();
    },
  };
}

function errorBlock(title: string, e: { message: string; code?: string; stack?: string }) {
  return h(
    'div',
    { class: 'error-block', 'data-field': 'error' },
    h('h3', {}, title),
    h('p', { class: 'error' }, errorLine(e.code, e.message)),
    e.stack ? h('details', {}, h('summary', {}, 'Stack'), h('pre', {}, e.stack)) : null,
  );
}

function resultBlock(result: unknown) {
  const job = processOf(result);
  const raw = h(
    'pre',
    { class: 'json', 'data-field': 'result' },
    result === undefined ? '(none)' : json(result),
  );
  if (!job) return [h('h3', {}, 'Result'), raw];
  const p = job.proc;
  if (!p) return [h('h3', {}, 'Result (race: every racer lost)'), raw];
  const ending =
    p.signal !== undefined && p.signal !== null ? `signal ${p.signal}` : `exit ${p.exit ?? '?'}`;
  const ok = (p.signal === undefined || p.signal === null) && p.exit === 0;
  return h(
    'div',
    { class: 'job-result', 'data-field': 'job-result' },
    h('h3', {}, job.race ? 'Result (race winner)' : 'Result'),
    h(
      'p',
      {},
      h(
        'span',
        { class: `badge ${ok ? 'state-completed' : 'state-failed'}`, 'data-field': 'ending' },
        ending,
      ),
      p.truncated
        ? h('span', { class: 'badge warn', 'data-field': 'truncated' }, 'output truncated')
        : null,
      p.timedOut ? h('span', { class: 'badge warn' }, 'timed out') : null,
      p.server ? ` on ${p.server}` : '',
      p.pid ? ` (pid ${p.pid})` : '',
      p.started && p.finished
        ? ` · ran ${duration(Date.parse(p.finished) - Date.parse(p.started))}`
        : '',
    ),
    p.error ? h('p', { class: 'error' }, p.error) : null,
    h('h4', {}, 'stdout'),
    h('pre', { class: 'output', 'data-field': 'stdout' }, p.stdout || '(empty)'),
    h('h4', {}, 'stderr'),
    h('pre', { class: 'output', 'data-field': 'stderr' }, p.stderr || '(empty)'),
    h('details', {}, h('summary', {}, 'Raw result JSON'), raw),
  );
}
