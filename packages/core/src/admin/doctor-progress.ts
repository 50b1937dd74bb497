import type { EngineContext } from '../engine/context.js';
import { bucketName } from '../engine/layout.js';
import { PROGRESS_AREA, parseProgress, progressPath } from '../engine/progress.js';
import { KEY_SEPARATOR } from '../tree/keys.js';
import type {
  Diagnosis,
  Got,
  ProgressNode,
  Recheck,
  TaskFacts,
  Verdict,
} from './doctor-findings.js';
import { recheckBy } from './doctor-recheck.js';

/**
 * The progress area, `/zoott_g/<world>/<b>/<key>`: a node per running (or failed, or
 * retrying) task that reported anything. Cancel deletes it with the task and a completion
 * takes it into the completed record, so a node of a task that does not exist or that
 * completed is left over, and so is one of a later attempt than the task's next (a writer
 * stops at such a node). Each is moved away safely: nothing reads it but `show` and the
 * event stream, and a new attempt of the task would find it there.
 *
 * Read before the areas and the tree: a node checked here is compared with its task once
 * the tree is read (`progressRelation`).
 */
export async function diagnoseProgress(diagnosis: Diagnosis): Promise<void> {
  const { layout } = diagnosis.ctx;
  const top = layout.areaRoot(PROGRESS_AREA);
  for (const bucket of await diagnosis.folder(top)) {
    const dir = `${top}/${bucket}`;
    const names = await diagnosis.folder(dir);
    await Promise.all(
      names.map(async (name) => {
        const path = `${dir}/${name}`;
        const got = await diagnosis.read(path);
        if (!got) return;
        await diagnosis.checkAcl(path);
        const node = progressNode(diagnosis.ctx, path, bucket, name, got);
        if ('kind' in node)
          diagnosis.addVerdict(
            path,
            node,
            progressRecheck(diagnosis.ctx, { path, bucket, key: name }, node.kind),
          );
        else diagnosis.progress.push({ path, bucket, key: name, attempt: node.attempt });
      }),
    );
  }
}

/** A progress node by itself: a finding (misplaced, not progress), or the attempt it is of. */
function progressNode(
  ctx: EngineContext,
  path: string,
  bucket: string,
  name: string,
  got: Got,
): Verdict | { attempt: number } {
  const { layout } = ctx;
  const key = name.split(KEY_SEPARATOR);
  if (progressPath(layout, key) !== path)
    return {
      kind: 'corrupt',
      detail: `progress node in bucket ${bucket}, not its task's ${bucketName(layout.bucketOf(key))}: nothing reads it`,
      repair: 'quarantine',
    };
  const report = parseProgress(got.data);
  if (!report)
    return {
      kind: 'corrupt',
      detail:
        'progress node: not {attempt, log, ...}; `show` and the event stream skip it, the next attempt overwrites it',
      repair: 'quarantine',
    };
  return { attempt: report.attempt };
}

/** A progress node of task `name` (of `attempt`) against its task: orphan, stale or fine. */
export function progressRelation(name: string, attempt: number, facts: TaskFacts): Verdict | null {
  if (!facts.hasTree(name))
    return {
      kind: 'orphan',
      detail: `progress of task ${name}, which has no tree node (a cancel removes both)`,
      repair: 'quarantine',
    };
  if (facts.completed(name))
    return {
      kind: 'stale',
      detail: `progress of task ${name}, which completed (a completion moves the report into its record and deletes this node); \`show\` shows this node instead of the record's report`,
      repair: 'quarantine',
    };
  const attempts = facts.attempts(name);
  if (attempt > (attempts ?? Number.POSITIVE_INFINITY) + 1)
    return {
      kind: 'stale',
      detail: `progress of attempt ${attempt} of task ${name}, which is at attempt ${attempts} (its attempts were reset by a retry or a re-queue): the writer of its next attempt stops at a node of a later attempt, so that attempt's progress would never show`,
      repair: 'quarantine',
    };
  return null;
}

/** How to make a finding about a progress node again: by itself, then against its task. */
export function progressRecheck(
  ctx: EngineContext,
  { path, bucket, key }: Omit<ProgressNode, 'attempt'>,
  kind: Verdict['kind'],
): Recheck {
  return recheckBy(ctx, path, kind, key, (got: Got, facts: TaskFacts) => {
    const node = progressNode(ctx, path, bucket, key, got);
    return 'kind' in node ? node : progressRelation(key, node.attempt, facts);
  });
}
