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
  element,
  errorLine,
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
  task: TaskRecord,
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
    task.state === 'failed'
      ? element(
          'button',
          {
            type: 'button',
            'data-action': 'retry',
            onclick: () => void act('retried', () => api.retry(ctx.world, key)),
          },
          'Retry',
        )
      : null,
    task.state !== null ? cancel : null,
  ];
}

/** The label and value of each field of a task record the page shows. */
function fieldRows(task: TaskRecord): [string, Child][] {
  const rows: [string, Child][] = [
    ['Type', task.type],
    [
      'State',
      element(
        'span',
        { class: `badge state-${task.state ?? 'none'}`, 'data-field': 'state' },
        task.state ?? 'no state',
      ),
    ],
    [
      'Attempts',
      task.maxAttempts ? `${task.attempts} of ${task.maxAttempts}` : String(task.attempts),
    ],
  ];
  if (task.priority !== undefined) rows.push(['Priority', String(task.priority)]);
  if (task.worker)
    rows.push([
      'Worker',
      [
        task.worker.worker,
        task.worker.host ? ` on ${task.worker.host}` : '',
        task.worker.pid ? ` (pid ${task.worker.pid})` : '',
      ].join(''),
    ]);
  if (task.hints) rows.push(['Hints', json(task.hints)]);
  rows.push(['Queued', time(task.queuedAt)]);
  if (task.notBefore) rows.push(['Not before', time(task.notBefore)]);
  if (task.startedAt)
    rows.push([
      'Started',
      `${time(task.startedAt)}${task.queuedAt ? ` (waited ${duration(task.startedAt - task.queuedAt)})` : ''}`,
    ]);
  if (task.completedAt)
    rows.push([
      'Completed',
      `${time(task.completedAt)}${task.startedAt ? ` (ran ${duration(task.completedAt - task.startedAt)})` : ''}`,
    ]);
  if (task.failedAt) rows.push(['Failed', time(task.failedAt)]);
  return rows;
}

/**
 * A task's page body: name and state, its fields, its data, what it reported (progress and
 * log lines), then its error or result.
 */
function taskSections(task: TaskRecord & { report?: TaskProgress | null }): Child[] {
  const sections: Child[] = [
    element(
      'h2',
      {},
      task.name,
      ' ',
      element('span', { class: `badge state-${task.state ?? 'none'}` }, task.state ?? 'no state'),
    ),
    element(
      'dl',
      { class: 'fields' },
      fieldRows(task).map(([k, v]) => [element('dt', {}, k), element('dd', {}, v)]),
    ),
    element('h3', {}, 'Data'),
    element(
      'pre',
      { class: 'json', 'data-field': 'data' },
      task.data === undefined ? '(none)' : json(task.data),
    ),
  ];
  sections.push(reportBlock(task.report));
  if (task.error) sections.push(errorBlock('Error', task.error));
  else if (task.lastError) sections.push(errorBlock('Last error (will retry)', task.lastError));
  if (task.state === 'completed') sections.push(resultBlock(task.result));
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

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

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
  const body = element('div', { class: 'task-body' });
  const actions = element('div', { class: 'actions' });
  const el = element(
    'section',
    { class: 'page task' },
    element(
      'nav',
      { class: 'crumbs' },
      element('a', { href: href(ctx.world, 'tree') }, ctx.world),
      key.map((name, index) => [
        ' / ',
        element('a', { href: href(ctx.world, 'task', key.slice(0, index + 1)) }, name),
      ]),
    ),
    actions,
    body,
  );

  const act = (what: string, run: () => Promise<unknown>) =>
    taskAction(ctx, what, key, run, refresh);

  const renderActions = (task: TaskRecord | null) =>
    ctx.readOnly || !task
      ? replace(actions)
      : replace(actions, ...actionButtons(task, act, ctx, key));

  const refresh = serial(async () => {
    let task: TaskRecord | null = null;
    try {
      task = await api.task(ctx.world, key);
    } catch (err) {
      replace(body, element('p', { class: 'error' }, errorText(err)));
      renderActions(null);
      return;
    }
    replace(body, taskSections(task));
    renderActions(task);
  });
  const soon = throttle(refresh, 200);
  const mine = encodeKey(key);
  return {
    el,
    refresh,
    onTask: (event: EngineEvent) => {
      if (encodeKey(event.key) === mine) soon();
    },
  };
}

function errorBlock(title: string, error: { message: string; code?: string; stack?: string }) {
  return element(
    'div',
    { class: 'error-block', 'data-field': 'error' },
    element('h3', {}, title),
    element('p', { class: 'error' }, errorLine(error.code, error.message)),
    error.stack
      ? element('details', {}, element('summary', {}, 'Stack'), element('pre', {}, error.stack))
      : null,
  );
}

function resultBlock(result: unknown) {
  const job = processOf(result);
  const raw = element(
    'pre',
    { class: 'json', 'data-field': 'result' },
    result === undefined ? '(none)' : json(result),
  );
  if (!job) return [element('h3', {}, 'Result'), raw];
  const proc = job.proc;
  if (!proc) return [element('h3', {}, 'Result (race: every racer lost)'), raw];
  const ending =
    proc.signal !== undefined && proc.signal !== null
      ? `signal ${proc.signal}`
      : `exit ${proc.exit ?? '?'}`;
  const ok = (proc.signal === undefined || proc.signal === null) && proc.exit === 0;
  return element(
    'div',
    { class: 'job-result', 'data-field': 'job-result' },
    element('h3', {}, job.race ? 'Result (race winner)' : 'Result'),
    element(
      'p',
      {},
      element(
        'span',
        { class: `badge ${ok ? 'state-completed' : 'state-failed'}`, 'data-field': 'ending' },
        ending,
      ),
      proc.truncated
        ? element('span', { class: 'badge warn', 'data-field': 'truncated' }, 'output truncated')
        : null,
      proc.timedOut ? element('span', { class: 'badge warn' }, 'timed out') : null,
      proc.server ? ` on ${proc.server}` : '',
      proc.pid ? ` (pid ${proc.pid})` : '',
      proc.started && proc.finished
        ? ` · ran ${duration(Date.parse(proc.finished) - Date.parse(proc.started))}`
        : '',
    ),
    proc.error ? element('p', { class: 'error' }, proc.error) : null,
    element('h4', {}, 'stdout'),
    element('pre', { class: 'output', 'data-field': 'stdout' }, proc.stdout || '(empty)'),
    element('h4', {}, 'stderr'),
    element('pre', { class: 'output', 'data-field': 'stderr' }, proc.stderr || '(empty)'),
    element('details', {}, element('summary', {}, 'Raw result JSON'), raw),
  );
}
