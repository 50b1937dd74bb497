import type { Acl } from '../contract/acl.js';
import { utf8 } from '../contract/paths.js';
import type { EngineContext } from './context.js';
import { codeOf } from './errors.js';
import { describeAcl, sameAcl } from './world-acl.js';

/** What kind of damage a finding is. */
export type FindingKind =
  /**
   * Data that is not JSON, or JSON of the wrong shape, where zoott reads its own records
   * and settings (the world meta, schedules, rate limits, progress, candidates).
   */
  | 'corrupt'
  /**
   * A persistent node where zoott only writes ephemeral ones (a claim, a registration, an
   * election candidate).
   */
  | 'not-ephemeral'
  /** A pending entry, a record or a progress node whose task has no tree node. */
  | 'orphan'
  /** A leaf tree node with no pending entry, claim or record: a task in no state. */
  | 'no-state'
  /**
   * A progress node the protocol says is gone: its task completed, or it is of a later
   * attempt than the task's next (its attempts were reset).
   */
  | 'stale'
  /** A node whose ACL is not the world's. */
  | 'weak-acl'
  /** A node under `/zoott_r` the world uses (reply path, race state) whose ACL is not the world's. */
  | 'reply-acl'
  /** An internal world (a race world) whose world is gone. */
  | 'leftover-world';

/** One problem `diagnoseWorld` found. */
export interface Finding {
  kind: FindingKind;
  path: string;
  /** What is wrong, in words. */
  detail: string;
  /**
   * `quarantine`: `repairWorld` moves it to the quarantine area (it is safe to move: the
   * engine ignores it or it blocks a task). `none`: reported only, with what to do in
   * `detail` (it is user data or a setting, or another verb fixes it).
   */
  repair: 'quarantine' | 'none';
}

export const missingIsNull = <T>(p: Promise<T>): Promise<T | null> =>
  p.catch((err) => (codeOf(err) === 'NO_NODE' ? null : Promise.reject(err)));

export function parseJson(
  data: Uint8Array,
): { ok: true; value: unknown } | { ok: false; why: string } {
  try {
    return { ok: true, value: JSON.parse(utf8.decode(data)) };
  } catch (err) {
    return { ok: false, why: `data is not JSON (${(err as Error).message})` };
  }
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The findings of one diagnosis, and the checks every part of it shares. */
export class Diagnosis {
  readonly found: Finding[] = [];
  /** Keys of the tree's tasks, and those of them that are leaves. */
  readonly treeKeys = new Set<string>();
  readonly leaves: string[] = [];
  /** Keys that have an entry, a claim or a record. */
  readonly stated = new Set<string>();
  /** Keys with a completed record. */
  readonly completed = new Set<string>();
  /** Attempts so far of each task with a pending entry (what its next claim adds one to). */
  readonly attempts = new Map<string, number>();

  constructor(
    readonly ctx: EngineContext,
    private readonly acl: readonly Acl[] | null,
  ) {}

  add(kind: FindingKind, path: string, detail: string, repair: Finding['repair']): void {
    this.found.push({ kind, path, detail, repair });
  }

  /** Reports `path` when its ACL is not the world's (no check without one). */
  async checkAcl(path: string, kind: 'weak-acl' | 'reply-acl' = 'weak-acl'): Promise<void> {
    const acl = this.acl;
    if (!acl) return;
    const got = await missingIsNull(this.ctx.coordinator.getAcl(path));
    if (got && !sameAcl(got.acl, acl))
      this.add(
        kind,
        path,
        `ACL is ${describeAcl(got.acl)}, not the world's ${describeAcl(acl)}; \`zoott lock-down\` fixes it`,
        'none',
      );
  }

  /** The children of `path` (none when it is missing), after checking its ACL. */
  async folder(path: string): Promise<string[]> {
    await this.checkAcl(path);
    return (await missingIsNull(this.ctx.coordinator.children(path))) ?? [];
  }
}
