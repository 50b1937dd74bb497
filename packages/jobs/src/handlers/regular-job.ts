import type { TaskContext } from '@zoott/core';
import { buildRegularResult, type RegularJobResult, validateRegularJob } from '@zoott/core/jobs';
import { runRegularJob } from '../jobs/index.js';
import { parseReport } from '../jobs/report-channel.js';
import {
  checkExecutable,
  checkResultFits,
  type HandlerContext,
  holding,
  permanentIfTooLarge,
} from './options.js';

/** A job's fd-3 line, handed to the task's progress and log. */
function report(task: TaskContext, line: string): void {
  const r = parseReport(line);
  if (!r) return;
  if ('log' in r) task.log(r.log);
  else
    try {
      task.progress(r.progress);
    } catch (err) {
      // A value too large or not JSON-like: say so in the log instead of failing the job.
      task.log(`progress refused: ${(err as Error).message}`);
    }
}

/**
 * Handler of `zoott.job`: validates the task data as a regular job (an invalid one is a
 * permanent INVALID_JOB failure), checks the executable against the policy, runs it and
 * returns the result JSON, which the engine records (and publishes to the reply channel).
 */
export async function runJobTask(h: HandlerContext, task: TaskContext): Promise<RegularJobResult> {
  const job = validateRegularJob(task.data);
  await checkExecutable(h, job.executable);
  checkResultFits(h, (run) => buildRegularResult(job, run, { maxBytes: h.maxResultBytes }));
  // The parent's result as the job's input: what makes a chain of jobs a pipeline.
  const input =
    job.parentResult === 'stdin'
      ? { ...job, stdin: JSON.stringify((await task.parentResult()) ?? null) }
      : job;
  let pid = 0;
  try {
    return await runRegularJob(input, {
      serverName: h.serverName,
      cwd: h.workDir,
      env: h.env,
      maxOutputBytes: h.maxOutputBytes,
      maxResultBytes: h.maxResultBytes,
      killGraceMs: h.killGraceMs,
      signal: task.signal,
      allowExec: h.policy,
      ...(h.runAs ? { runAs: h.runAs } : {}),
      ...holding(h),
      onReportLine: (line) => report(task, line),
      onSpawn: (p) => {
        pid = p;
        h.processes?.started(p);
      },
      ...(h.timeoutMs !== undefined ? { timeoutMs: h.timeoutMs } : {}),
    });
  } catch (err) {
    throw permanentIfTooLarge(err, h.maxResultBytes);
  } finally {
    if (pid > 0) h.processes?.ended(pid);
  }
}
