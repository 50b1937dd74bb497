import type { Acl } from '../contract/acl.js';
import type { Op, Stat } from '../contract/coordinator.js';
import { utf8 } from '../contract/paths.js';
import type { EngineContext } from './context.js';
import { codeOf } from './errors.js';
import type { Area } from './layout.js';
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
  | 'leftover-world'
  /**
   * A result the AMQP bridge parked (`/zoott_parked/<world>`): it could not be published,
   * and its consumer still waits. `zoott parked` retries or drops it; never moved.
   */
  | 'parked-result';

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

/** A finding without its path: what a check says of one node. */
export type Verdict = Omit<Finding, 'path'>;

/** A node as read: its bytes and its stat. */
export interface Got {
  data: Uint8Array;
  stat: Stat;
}

/**
 * What a task's other nodes say, which a finding about one of its nodes rests on (an orphan
 * has no tree node, stale progress is of a completed task or of a later attempt).
 */
export interface TaskFacts {
  hasTree(key: string): boolean;
  completed(key: string): boolean;
  /** Attempts so far of the task's pending entry (the most of them, if it has several). */
  attempts(key: string): number | undefined;
}

/**
 * A quarantine finding made again, with fresh reads, just before its node is moved: the node
 * as read now and the ops that keep what the finding rests on as it was read (versions of the
 * task's other nodes, the absence of its tree node), for the move's multi; or why the finding
 * no longer holds.
 */
export type Rechecked = { got: Got; guard: Op[] } | { left: 'gone' | 'no longer damaged' };
export type Recheck = () => Promise<Rechecked>;

// Kept beside the findings, not in them: a finding is plain data (printed as JSON), and a
// finding that did not come from a diagnosis has no recheck, so repair never moves it.
const rechecks = new WeakMap<Finding, Recheck>();

/** How `repairWorld` makes `finding` again before it moves the node; none if not a diagnosis'. */
export const recheckOf = (finding: Finding): Recheck | undefined => rechecks.get(finding);

/** How far a diagnosis is: nodes read, and the part of the world it reads now. */
export interface DiagnosisProgress {
  /** Nodes read so far (tasks, entries, records, claims, progress, settings...). */
  nodes: number;
  /** The part being read, e.g. `areas`; `done` once every part is. */
  part: string;
  /** Parts finished, of `parts`. */
  partsDone: number;
  parts: number;
}

/** A node of an area that holds a task, kept for its orphan check once the tree is read. */
export interface KeyedNode {
  path: string;
  area: Area;
  name: string;
  key: string;
}

/** A progress node that parses, kept to be compared with its task once the tree is read. */
export interface ProgressNode {
  path: string;
  bucket: string;
  key: string;
  attempt: number;
}

/** The findings of one diagnosis, and the checks every part of it shares. */
export class Diagnosis implements TaskFacts {
  readonly found: Finding[] = [];
  /** Keys of the tree's tasks, and those of them that are leaves. */
  readonly treeKeys = new Set<string>();
  readonly leaves: string[] = [];
  /** Keys that have an entry, a claim or a record. */
  readonly stated = new Set<string>();
  /** Keys with a completed record. */
  readonly completedKeys = new Set<string>();
  /** Attempts so far of each task with a pending entry (what its next claim adds one to). */
  readonly attemptsOf = new Map<string, number>();
  /** Nodes that belong to a task, checked against the tree once it is read. */
  readonly keyed: KeyedNode[] = [];
  /** Progress nodes that parse, checked against their task once the tree is read. */
  readonly progress: ProgressNode[] = [];
  private nodes = 0;
  private part = 'starting';
  private partsDone = 0;
  private parts = 0;

  constructor(
    readonly ctx: EngineContext,
    private readonly acl: readonly Acl[] | null,
    private readonly onProgress?: (p: DiagnosisProgress) => void,
  ) {}

  hasTree(key: string): boolean {
    return this.treeKeys.has(key);
  }
  completed(key: string): boolean {
    return this.completedKeys.has(key);
  }
  attempts(key: string): number | undefined {
    return this.attemptsOf.get(key);
  }

  add(
    kind: FindingKind,
    path: string,
    detail: string,
    repair: Finding['repair'],
    recheck?: Recheck,
  ): void {
    const finding: Finding = { kind, path, detail, repair };
    if (recheck && repair === 'quarantine') rechecks.set(finding, recheck);
    this.found.push(finding);
  }

  /** Adds `verdict` about `path` (made again by `recheck` before a repair moves it). */
  addVerdict(path: string, verdict: Verdict, recheck?: Recheck): void {
    this.add(verdict.kind, path, verdict.detail, verdict.repair, recheck);
  }

  /** Reads `path` for a check (null when it is gone), counting it for the progress report. */
  async read(path: string): Promise<Got | null> {
    const got = await missingIsNull(this.ctx.coordinator.get(path));
    this.tick();
    return got;
  }

  /** One more node read. */
  tick(): void {
    this.nodes++;
    this.report();
  }

  /** Starts the part `name` of `parts` (the one before it is done). */
  startPart(name: string, index: number, parts: number): void {
    this.part = name;
    this.partsDone = index;
    this.parts = parts;
    this.report();
  }

  private report(): void {
    this.onProgress?.({
      nodes: this.nodes,
      part: this.part,
      partsDone: this.partsDone,
      parts: this.parts,
    });
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
