/**
 * The chaos checker: a pure function from what a chaos run left behind (the completed area,
 * the leftovers of the other areas, the workers' event log and the fault timeline) to a
 * verdict. Pure, so its own test can feed it broken histories and see it object.
 */

/** One line of the event log the chaos handlers append. */
export interface ExecEvent {
  event: 'start' | 'finish' | 'abort';
  key: string;
  /** Unique per execution; the handler returns it, so the completed record names it. */
  exec: string;
  pid: number;
  time: number;
}

/** A completed record as read back from the completed area. */
export interface CompletedEntry {
  key: string;
  /** Server time the record was created (the complete multi committed). */
  ctime: number;
  attempts: number;
  /** The execution whose result was recorded. */
  exec: string | undefined;
}

export type Fault =
  | { kind: 'worker-kill'; pid: number; at: number }
  | {
      kind: 'partition';
      pid: number;
      from: number;
      to: number;
      /** Whether the cut-off worker had a job running when it was cut off. */
      running?: boolean;
    }
  | { kind: 'leader-stop'; member: number; from: number; to: number }
  | { kind: 'follower-stop'; member: number; from: number; to: number }
  /** A member cut off the network (its namespace's link down): the ensemble split 2/1. */
  | { kind: 'split'; member: number; from: number; to: number };

export type FaultKind = Fault['kind'];

export interface ChaosHistory {
  /** Every key the producer queued (`a|b|c`). */
  queued: readonly string[];
  completed: readonly CompletedEntry[];
  /** Keys or node names still in the pending, working and failed areas. */
  leftovers: { pending: string[]; working: string[]; failed: string[] };
  events: readonly ExecEvent[];
  faults: readonly Fault[];
  /** Worker pids still alive after the run. */
  liveProcesses: readonly number[];
  /** Slack around a fault window when an extra execution is blamed on it (ms). */
  marginMs: number;
}

export type RetryCause = 'worker-kill' | 'partition' | 'ensemble';

export interface ChaosVerdict {
  tasks: number;
  faultsByKind: Record<FaultKind, number>;
  /** Queued but not completed. */
  lost: string[];
  /** Completed more than once, or started again after its completion. */
  duplicated: string[];
  /** Completed but never queued. */
  unexpected: string[];
  /** `child <- ancestor`: the child started before a queued ancestor completed. */
  orderViolations: string[];
  /** Completed records whose execution is not in the event log. */
  unloggedCompletions: string[];
  leftovers: ChaosHistory['leftovers'];
  liveProcesses: number[];
  executions: number;
  completions: number;
  /** executions - completions. */
  extraExecutions: number;
  /** The extra executions, each blamed on the fault that voided it. */
  retriesByCause: Record<RetryCause, number>;
  /** Extra executions no fault explains (`key exec`). */
  unexplained: string[];
  /** Sum over completed records of (attempts - 1): the retries the engine counted. */
  engineRetries: number;
}

const KINDS: FaultKind[] = ['worker-kill', 'partition', 'leader-stop', 'follower-stop', 'split'];

/** Builds the verdict; `ok(verdict)` says whether it proves the run correct. */
export function checkChaos(h: ChaosHistory): ChaosVerdict {
  const queued = new Set(h.queued);
  const byKey = new Map<string, CompletedEntry[]>();
  for (const c of h.completed) byKey.set(c.key, [...(byKey.get(c.key) ?? []), c]);
  const starts = new Map<string, ExecEvent[]>();
  const ends = new Map<string, ExecEvent>();
  for (const e of h.events) {
    if (e.event === 'start') starts.set(e.key, [...(starts.get(e.key) ?? []), e]);
    else ends.set(e.exec, e);
  }

  const lost = h.queued.filter((k) => !byKey.has(k));
  const unexpected = [...byKey.keys()].filter((k) => !queued.has(k));
  const duplicated: string[] = [];
  const unlogged: string[] = [];
  for (const [key, records] of byKey) {
    const record = records[0]!;
    const runs = starts.get(key) ?? [];
    if (records.length > 1 || runs.some((s) => s.time > record.ctime)) duplicated.push(key);
    if (!runs.some((s) => s.exec === record.exec)) unlogged.push(key);
  }

  const orderViolations: string[] = [];
  for (const key of h.queued) {
    const names = key.split('|');
    for (let depth = 1; depth < names.length; depth++) {
      const ancestor = names.slice(0, depth).join('|');
      const done = byKey.get(ancestor)?.[0];
      const early = (starts.get(key) ?? []).some((s) => done === undefined || s.time < done.ctime);
      if (early) orderViolations.push(`${key} <- ${ancestor}`);
    }
  }

  const retriesByCause: Record<RetryCause, number> = {
    'worker-kill': 0,
    partition: 0,
    ensemble: 0,
  };
  const unexplained: string[] = [];
  let executions = 0;
  for (const [key, runs] of starts) {
    executions += runs.length;
    const winner = byKey.get(key)?.[0]?.exec;
    for (const run of runs) {
      if (run.exec === winner) continue;
      const cause = blame(run, ends.get(run.exec)?.time ?? Number.POSITIVE_INFINITY, h);
      if (cause) retriesByCause[cause]++;
      else unexplained.push(`${key} ${run.exec}`);
    }
  }

  const faultsByKind = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  for (const f of h.faults) faultsByKind[f.kind]++;
  return {
    tasks: h.queued.length,
    faultsByKind,
    lost,
    duplicated,
    unexpected,
    orderViolations,
    unloggedCompletions: unlogged,
    leftovers: h.leftovers,
    liveProcesses: [...h.liveProcesses],
    executions,
    completions: h.completed.length,
    extraExecutions: executions - h.completed.length,
    retriesByCause,
    unexplained,
    engineRetries: h.completed.reduce((n, c) => n + Math.max(0, c.attempts - 1), 0),
  };
}

/** The fault that explains why an execution's result was not the one recorded. */
function blame(run: ExecEvent, end: number, h: ChaosHistory): RetryCause | null {
  const m = h.marginMs;
  const overlaps = (from: number, to: number) => run.time <= to + m && end >= from - m;
  for (const f of h.faults)
    if (f.kind === 'worker-kill' && f.pid === run.pid && overlaps(f.at, f.at)) return 'worker-kill';
  for (const f of h.faults)
    if (f.kind === 'partition' && f.pid === run.pid && overlaps(f.from, f.to)) return 'partition';
  for (const f of h.faults)
    if (
      (f.kind === 'leader-stop' || f.kind === 'follower-stop' || f.kind === 'split') &&
      overlaps(f.from, f.to)
    )
      return 'ensemble';
  return null;
}

/** Whether the verdict proves the run: nothing lost, duplicated, out of order or left over. */
export function chaosProblems(v: ChaosVerdict): string[] {
  const problems: string[] = [];
  const list = (what: string, items: readonly unknown[]) => {
    if (items.length > 0)
      problems.push(`${what}: ${items.length} (${items.slice(0, 5).map(String).join(', ')})`);
  };
  list('lost', v.lost);
  list('duplicated', v.duplicated);
  list('unexpected', v.unexpected);
  list('order violations', v.orderViolations);
  list('unlogged completions', v.unloggedCompletions);
  list('pending left', v.leftovers.pending);
  list('working left', v.leftovers.working);
  list('failed', v.leftovers.failed);
  list('live worker processes', v.liveProcesses);
  list('unexplained extra executions', v.unexplained);
  return problems;
}
