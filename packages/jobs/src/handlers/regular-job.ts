import type { TaskContext } from '@zoott/core';
import { buildRegularResult, type RegularJobResult, validateRegularJob } from '@zoott/core/jobs';
import { runRegularJob } from '../jobs/index.js';
import {
  checkExecutable,
  checkResultFits,
  type HandlerContext,
  permanentIfTooLarge,
} from './options.js';

/**
 * Handler of `zoott.job`: validates the task data as a regular job (an invalid one is a
 * permanent INVALID_JOB failure), checks the executable against the policy, runs it and
 * returns the result JSON, which the engine records (and publishes to the reply channel).
 */
export async function runJobTask(h: HandlerContext, task: TaskContext): Promise<RegularJobResult> {
  const job = validateRegularJob(task.data);
  await checkExecutable(h, job.executable);
  checkResultFits(h, (run) => buildRegularResult(job, run, { maxBytes: h.maxResultBytes }));
  let pid = 0;
  try {
    return await runRegularJob(job, {
      serverName: h.serverName,
      cwd: h.workDir,
      env: h.env,
      maxOutputBytes: h.maxOutputBytes,
      maxResultBytes: h.maxResultBytes,
      killGraceMs: h.killGraceMs,
      signal: task.signal,
      allowExec: h.policy,
      ...(h.runAs ? { runAs: h.runAs } : {}),
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
