import { KEY_SEPARATOR } from '../tree/keys.js';
import type { Diagnosis } from './doctor-findings.js';
import { missingIsNull } from './doctor-findings.js';
import { bucketName } from './layout.js';
import { PROGRESS_AREA, parseProgress, progressPath } from './progress.js';

/**
 * The progress area, `/zoott_g/<world>/<b>/<key>`: a node per running (or failed, or
 * retrying) task that reported anything. Cancel deletes it with the task and a completion
 * takes it into the completed record, so a node of a task that does not exist or that
 * completed is left over, and so is one of a later attempt than the task's next (a writer
 * stops at such a node). Each is moved away safely: nothing reads it but `show` and the
 * event stream, and a new attempt of the task would find it there.
 */
export async function diagnoseProgress(d: Diagnosis): Promise<void> {
  const { coordinator: c, layout } = d.ctx;
  const top = `/zoott_${PROGRESS_AREA}/${layout.world}`;
  for (const bucket of await d.folder(top)) {
    const dir = `${top}/${bucket}`;
    const names = await d.folder(dir);
    await Promise.all(
      names.map(async (name) => {
        const path = `${dir}/${name}`;
        const got = await missingIsNull(c.get(path));
        if (!got) return;
        await d.checkAcl(path);
        const key = name.split(KEY_SEPARATOR);
        if (progressPath(layout, key) !== path) {
          d.add(
            'corrupt',
            path,
            `progress node in bucket ${bucket}, not its task's ${bucketName(layout.bucketOf(key))}: nothing reads it`,
            'quarantine',
          );
          return;
        }
        const report = parseProgress(got.data);
        if (!report) {
          d.add(
            'corrupt',
            path,
            'progress node: not {attempt, log, ...}; `show` and the event stream skip it, the next attempt overwrites it',
            'quarantine',
          );
          return;
        }
        if (!d.treeKeys.has(name))
          d.add(
            'orphan',
            path,
            `progress of task ${name}, which has no tree node (a cancel removes both)`,
            'quarantine',
          );
        else if (d.completed.has(name))
          d.add(
            'stale',
            path,
            `progress of task ${name}, which completed (a completion moves the report into its record and deletes this node); \`show\` shows this node instead of the record's report`,
            'quarantine',
          );
        else if (report.attempt > (d.attempts.get(name) ?? Number.POSITIVE_INFINITY) + 1)
          d.add(
            'stale',
            path,
            `progress of attempt ${report.attempt} of task ${name}, which is at attempt ${d.attempts.get(name)} (its attempts were reset by a retry or a re-queue): the writer of its next attempt stops at a node of a later attempt, so that attempt's progress would never show`,
            'quarantine',
          );
      }),
    );
  }
}
