import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { paintState } from '../output/colors.js';
import { formatTaskError, formatTime } from '../output/format.js';
import { formatProgressValue } from '../output/progress-report.js';
import type { CommandBody } from '../runner.js';
import { parseTaskRef, showKey } from '../task-ref.js';
import type { Verb } from '../verb.js';

/**
 * `zoott show <task>`: a task's full record. When one of the task's own nodes cannot be
 * read, what could be read is printed, the bad nodes are named, and the exit code is 9.
 */
const showCommand: CommandBody = async (ctx, cmd: Command) => {
  const [ref] = cmd.processedArgs as [string];
  const key = parseTaskRef(ref);
  const engine = await ctx.session().engine();
  const [rec, report] = await Promise.all([engine.task(key), engine.progress(key)]);
  if (!rec)
    throw new CliError(
      `no task ${showKey(key)} in world ${engine.world}`,
      ExitCode.NOT_FOUND,
      '`zoott tree` shows the tasks there are; refer to one as a|b|c or a/b/c',
    );
  const code = rec.corrupt ? ExitCode.CORRUPT : ExitCode.OK;
  if (ctx.json) {
    ctx.printJson({
      ...rec,
      key: showKey(rec.key),
      path: rec.key.join('/'),
      // What the task reported with ctx.progress / ctx.log (its last run), or null.
      report,
      corrupt: rec.corrupt ?? [],
    });
    return code;
  }
  const colours = ctx.colors;
  const lines: [string, string][] = [
    ['key', showKey(rec.key)],
    ['name', rec.name],
    ['type', rec.type || '?'],
    ['state', paintState(colours, rec.state)],
    ['attempts', `${rec.attempts}${rec.maxAttempts ? ` of ${rec.maxAttempts}` : ''}`],
  ];
  if (rec.priority !== undefined) lines.push(['priority', String(rec.priority)]);
  if (rec.hints) lines.push(['hints', JSON.stringify(rec.hints)]);
  if (rec.queuedAt !== undefined) lines.push(['queued', formatTime(rec.queuedAt)]);
  if (rec.notBefore !== undefined) lines.push(['not before', formatTime(rec.notBefore)]);
  if (rec.worker)
    lines.push(['worker', rec.worker.worker + (rec.worker.host ? ` on ${rec.worker.host}` : '')]);
  if (rec.startedAt !== undefined) lines.push(['started', formatTime(rec.startedAt)]);
  if (rec.completedAt !== undefined) lines.push(['completed', formatTime(rec.completedAt)]);
  if (rec.failedAt !== undefined) lines.push(['failed', formatTime(rec.failedAt)]);
  if (rec.data !== undefined) lines.push(['data', JSON.stringify(rec.data)]);
  if (rec.result !== undefined) lines.push(['result', JSON.stringify(rec.result)]);
  if (rec.error) lines.push(['error', colours.red(formatTaskError(rec.error))]);
  if (rec.lastError && !rec.error) lines.push(['last error', formatTaskError(rec.lastError)]);
  if (report?.progress !== undefined)
    lines.push(['progress', `${formatProgressValue(report.progress)} (attempt ${report.attempt})`]);
  if (report && report.log.length > 0) {
    const logLines = [
      ...(report.dropped > 0 ? [colours.dim(`(${report.dropped} earlier lines not kept)`)] : []),
      ...report.log.map((l) => `${colours.dim(formatTime(l.at))} ${l.line}`),
    ];
    for (const [index, line] of logLines.entries()) lines.push([index === 0 ? 'log' : '', line]);
  }
  for (const bad of rec.corrupt ?? [])
    lines.push(['corrupt', colours.red(`${bad.path}: ${bad.reason}`)]);
  const width = Math.max(...lines.map(([k]) => k.length));
  ctx.out(lines.map(([k, v]) => `${colours.dim(k.padEnd(width))}  ${v}`).join('\n'));
  return code;
};

export const showVerb: Verb = {
  define: (program) =>
    program
      .command('show')
      .argument('<task>', 'a|b|c or a/b/c')
      .description("a task's full record"),
  examples: ['zoott show "requestFile_a|downloadFile_a"'],
  run: showCommand,
};
