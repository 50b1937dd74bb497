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
  const parsed = parseReport(line);
  if (!parsed) return;
  if ('log' in parsed) task.log(parsed.log);
  else
    try {
      task.progress(parsed.progress);
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
export async function runJobTask(
  handlerContext: HandlerContext,
  task: TaskContext,
): Promise<RegularJobResult> {
  const job = validateRegularJob(task.data);
  await checkExecutable(handlerContext, job.executable);
  checkResultFits(handlerContext, (run) =>
    buildRegularResult(job, run, { maxBytes: handlerContext.maxResultBytes }),
  );
  // The parent's result as the job's input: what makes a chain of jobs a pipeline.
  const input =
    job.parentResult === 'stdin'
      ? { ...job, stdin: JSON.stringify((await task.parentResult()) ?? null) }
      : job;
  let pid = 0;
  try {
    return await runRegularJob(input, {
      serverName: handlerContext.serverName,
      cwd: handlerContext.workDir,
      env: handlerContext.env,
      maxOutputBytes: handlerContext.maxOutputBytes,
      maxResultBytes: handlerContext.maxResultBytes,
      killGraceMs: handlerContext.killGraceMs,
      signal: task.signal,
      allowExec: handlerContext.policy,
      ...(handlerContext.runAs ? { runAs: handlerContext.runAs } : {}),
      ...holding(handlerContext),
      onReportLine: (line) => report(task, line),
      onSpawn: (spawnedPid) => {
        pid = spawnedPid;
        handlerContext.processes?.started(spawnedPid);
      },
      ...(handlerContext.timeoutMs !== undefined ? { timeoutMs: handlerContext.timeoutMs } : {}),
    });
  } catch (err) {
    throw permanentIfTooLarge(err, handlerContext.maxResultBytes);
  } finally {
    if (pid > 0) handlerContext.processes?.ended(pid);
  }
}
