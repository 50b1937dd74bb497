import type { TaskProgress } from '../api.js';
import { type Child, element, json, time } from '../dom.js';

/**
 * What a task reported with `ctx.progress` / `ctx.log` (or a job on fd 3): the latest
 * progress value (a bar for a fraction in [0, 1], JSON otherwise) and the last log lines.
 */
export function reportBlock(report: TaskProgress | null | undefined): Child {
  if (!report) return null;
  const progress = report.progress;
  const fraction = typeof progress === 'number' && progress >= 0 && progress <= 1 ? progress : null;
  return element(
    'div',
    { class: 'task-report', 'data-field': 'report' },
    element('h3', {}, `Progress (attempt ${report.attempt}, ${time(report.updatedAt)})`),
    progress === undefined
      ? null
      : fraction === null
        ? element('pre', { class: 'json', 'data-field': 'progress' }, json(progress))
        : element(
            'p',
            {},
            element('progress', { max: '1', value: String(fraction) }),
            ' ',
            element('span', { 'data-field': 'progress' }, `${Math.round(fraction * 1000) / 10}%`),
          ),
    report.log.length === 0
      ? null
      : element(
          'pre',
          { class: 'output', 'data-field': 'log' },
          [
            ...(report.dropped > 0 ? [`(${report.dropped} earlier lines not kept)`] : []),
            ...report.log.map((l) => `${time(l.at)}  ${l.line}`),
          ].join('\n'),
        ),
  );
}
