import type { Acl } from '../contract/acl.js';
import type { Op, Stat } from '../contract/coordinator.js';
import { utf8 } from '../contract/paths.js';
import {
  adminCommand,
  adminsOf,
  type Denied,
  deniedBy,
  sameAcl,
  showAclShort,
  showDenied,
} from '../engine/acl-principal.js';
import type { EngineContext } from '../engine/context.js';
import { codeOf } from '../engine/errors.js';
import type { Area } from '../engine/layout.js';
import { describeAcl } from './world-acl.js';

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
  /** A node of the world's reply or race area (reply path, race state) whose ACL is not the world's. */
  | 'reply-acl'
  /**
   * A node zoott needs whose ACL denies the world's principal what the world's ACL gives it
   * (someone else made it first, or changed its ACL): only its admins can change that.
   */
  | 'squatted'
  /**
   * A node every world of the namespace shares (`/zoott_<area>`) whose ACL lets someone
   * change it: lock the other worlds out of it, or take an empty world node in it.
   */
  | 'shared-acl'
  /** A node the world needs that does not exist (a world made by zoott 0.1.0): `init` makes it. */
  | 'missing'
  /** The world's reply results where zoott 0.1.0 kept them: `--repair` (or `init`) moves them. */
  | 'legacy'
  /** An internal world (a race world) whose world is gone. */
  | 'leftover-world'
  /**
   * A result the AMQP bridge parked (`/zoott_~parked/<world>`): it could not be published,
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
   * engine ignores it or it blocks a task). `migrate`: `zoott doctor --repair` (and `init`)
   * moves it where this release keeps it. `admin`: only someone else can fix it, with the
   * command in `admin`. `none`: reported only, with what to do in `detail` (it is user data
   * or a setting, or another verb fixes it).
   */
  repair: 'quarantine' | 'migrate' | 'admin' | 'none';
  /** For `admin`: the zkCli.sh command an administrator must run, and as whom. */
  admin?: string;
}

export const missingIsNull = <T>(promise: Promise<T>): Promise<T | null> =>
  promise.catch((err) => (codeOf(err) === 'NO_NODE' ? null : Promise.reject(err)));

export function parseJson(
  data: Uint8Array,
): { ok: true; value: unknown } | { ok: false; why: string } {
  try {
    return { ok: true, value: JSON.parse(utf8.decode(data)) };
  } catch (err) {
    return { ok: false, why: `data is not JSON (${(err as Error).message})` };
  }
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

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

/**
 * Where a finding of a diagnosis carries its recheck: a property no one else can name, and
 * not enumerable, so a finding stays plain data where it is shown (printed as JSON, compared
 * in tests) and the recheck goes wherever the finding value goes (merged with another
 * world's findings, filtered). A finding that did not come from a diagnosis (parsed from
 * JSON, copied, made by hand) has none, so repair never moves it.
 */
const RECHECK: unique symbol = Symbol('recheck');
type Rechecking = Finding & { readonly [RECHECK]?: Recheck };

/** How `repairWorld` makes `finding` again before it moves the node; none if not a diagnosis'. */
export const recheckOf = (finding: Finding): Recheck | undefined =>
  (finding as Rechecking)[RECHECK];

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
    /** The ACL the world should have (its credentials'): weak ACLs are reported against it. */
    private readonly acl: readonly Acl[] | null,
    private readonly onProgress?: (progress: DiagnosisProgress) => void,
    /** Who the world runs as (`principalOf` its ACL): nodes that deny them are squatted. */
    readonly principal: readonly Acl[] | null = null,
    /** The ACL a squatted node must get back (the world's). */
    private readonly worldAcl: readonly Acl[] | null = null,
    /** The connect string's chroot, for the full paths of admin commands. */
    private readonly chroot = '',
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
    admin?: string,
  ): void {
    // Two parts may look at one node (an area's node, and the namespace's list of them).
    if (this.found.some((f) => f.kind === kind && f.path === path && f.detail === detail)) return;
    const finding: Finding = { kind, path, detail, repair, ...(admin ? { admin } : {}) };
    if (recheck && repair === 'quarantine')
      Object.defineProperty(finding, RECHECK, { value: recheck, enumerable: false });
    this.found.push(finding);
  }

  /** Adds `verdict` about `path` (made again by `recheck` before a repair moves it). */
  addVerdict(path: string, verdict: Verdict, recheck?: Recheck): void {
    this.add(verdict.kind, path, verdict.detail, verdict.repair, recheck);
  }

  /**
   * Reads `path` for a check (null when it is gone, or when its ACL does not let the world
   * read it: then it is reported as squatted), counting it for the progress report.
   */
  async read(path: string): Promise<Got | null> {
    try {
      return await missingIsNull(this.ctx.coordinator.get(path));
    } catch (err) {
      if (codeOf(err) !== 'NO_AUTH') throw err;
      await this.checkAcl(path);
      return null;
    } finally {
      this.tick();
    }
  }

  /** The children of `path`: none when it is missing, or unreadable (reported as squatted). */
  async list(path: string): Promise<string[]> {
    try {
      return (await missingIsNull(this.ctx.coordinator.children(path))) ?? [];
    } catch (err) {
      if (codeOf(err) !== 'NO_AUTH') throw err;
      await this.checkAcl(path);
      return [];
    }
  }

  /** The ACL of `path`: `null` when it is missing, `'unreadable'` when this session may not read it. */
  async aclOf(path: string): Promise<Acl[] | 'unreadable' | null> {
    try {
      return (await missingIsNull(this.ctx.coordinator.getAcl(path)))?.acl ?? null;
    } catch (err) {
      if (codeOf(err) === 'NO_AUTH') return 'unreadable';
      throw err;
    }
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

  /**
   * Reports `path` when its ACL denies the world's principal what the world's ACL gives it
   * (`squatted`: only its admins can fix it, with the command), else when it is not the
   * world's (`kind`; no such check without an ACL to hold it to).
   */
  async checkAcl(path: string, kind: 'weak-acl' | 'reply-acl' = 'weak-acl'): Promise<void> {
    const got = await this.aclOf(path);
    if (got === null) return;
    const denied = this.principal ? deniedBy(got, this.principal) : [];
    if (denied.length > 0) return this.squatted(path, got, denied);
    const acl = this.acl;
    if (acl && got !== 'unreadable' && !sameAcl(got, acl))
      this.add(
        kind,
        path,
        `ACL is ${describeAcl(got)}, not the world's ${describeAcl(acl)}; \`zoott lock-down\` fixes it`,
        'none',
      );
  }

  /** Reports a node the world's principal cannot use as zoott needs: only its admins can fix it. */
  squatted(path: string, acl: Acl[] | 'unreadable', denied: readonly Denied[]): void {
    const fix = {
      path,
      acl: [...(this.worldAcl ?? [])],
      recursive: true,
      admins: acl === 'unreadable' ? [] : adminsOf(acl),
    };
    this.add(
      'squatted',
      path,
      `${showAclShort(acl)}: the world's principal ${showDenied(denied)} here, so zoott cannot use it; someone else made it or changed its ACL, and neither \`lock-down\` nor \`--repair\` can change it back`,
      'admin',
      undefined,
      adminCommand(fix, this.chroot),
    );
  }

  /** The children of `path` (none when it is missing), after checking its ACL. */
  async folder(path: string): Promise<string[]> {
    await this.checkAcl(path);
    return this.list(path);
  }
}
