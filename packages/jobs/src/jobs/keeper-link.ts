import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { type GivenDeadlines, keeperSource } from './keeper-main.js';

// The worker's side of the job keeper (keeper-main.ts): starts it with the first job, tells it
// of each job, beats while jobs run (each beat carrying the jobs' kill deadlines), and hears
// which jobs it killed for silence or at their deadline. One keeper per process, whatever
// number of daemons or runners the process holds.

/** How one job is registered with the keeper. */
export interface KeeperJob {
  cgroup: string | null;
  pgid: number | null;
  silenceMs: number | null;
}

/**
 * When a job must be dead, as its worker sees it now: `at`, and `heardAt` (when ZooKeeper was
 * last heard from), in ms on CLOCK_MONOTONIC ({@link monotonicMs}), the clock the keeper reads
 * too; null while there is no deadline (no session being counted).
 */
export type KillDeadline = () => { at: number; heardAt: number } | null;

/** Now on CLOCK_MONOTONIC in ms: `process.hrtime`, the same in every process of the host. */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Longest time between two heartbeats; shorter when a job's silence limit asks for it. */
const BEAT_MS = 250;
/** How long a sync with the keeper may take before the worker stops waiting for it. */
const SYNC_MS = 2000;

class KeeperLink {
  private child: ChildProcess | null = null;
  private control: Writable | null = null;
  private root: string | null = null;
  private readonly jobs = new Map<number, KeeperJob>();
  /** Jobs the keeper killed because the worker was silent, with how long it was. */
  private readonly silenced = new Map<number, number>();
  /** Jobs the keeper killed at their deadline, with how long ZooKeeper had been silent. */
  private readonly unheard = new Map<number, number>();
  private readonly deadlines = new Map<number, KillDeadline>();
  private readonly unheardListeners = new Set<(silentMs: number) => void>();
  private readonly syncs = new Map<number, () => void>();
  private beat: NodeJS.Timeout | null = null;
  private nextId = 0;
  private nextSync = 0;

  /** The keeper's pid, once started (tests look at it). */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** Tells the keeper the cgroup it removes when the worker is gone. */
  adoptRoot(path: string): void {
    this.root = path;
    this.send({ t: 'root', path });
  }

  /** Registers a job, killed by the keeper at `deadline` if one is given; returns its id. */
  add(job: KeeperJob, deadline?: KillDeadline): number {
    const id = ++this.nextId;
    this.jobs.set(id, job);
    this.send({ t: 'add', id, ...job });
    if (deadline) {
      this.deadlines.set(id, deadline);
      this.sendBeat();
    }
    this.beatEvery();
    return id;
  }

  /** The process group of a job registered without one (known only once it is spawned). */
  setGroup(id: number, pgid: number): void {
    const job = this.jobs.get(id);
    if (!job) return;
    job.pgid = pgid;
    this.send({ t: 'pgid', id, pgid });
  }

  /** Asks the keeper to kill a job (process-group jobs): all it finds of it now, and has seen. */
  kill(id: number): void {
    this.send({ t: 'kill', id });
  }

  /**
   * Asks the keeper to kill what it has seen of a job whose leader ended (process-group
   * jobs), without looking again: the job's end is the common case, and a look costs.
   */
  reap(id: number): void {
    this.send({ t: 'reap', id });
  }

  forget(id: number): void {
    this.jobs.delete(id);
    this.silenced.delete(id);
    this.unheard.delete(id);
    this.deadlines.delete(id);
    this.send({ t: 'forget', id });
    this.beatEvery();
  }

  /**
   * Whether the keeper killed job `id` for silence: asked after every notice the keeper wrote
   * before this call has been read (a sync round trip), so a job the keeper killed is never
   * taken for one that died on its own. Returns how long the worker was silent, or null.
   */
  async silencedFor(id: number): Promise<number | null> {
    if (this.child !== null) {
      const sync = ++this.nextSync;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.syncs.delete(sync);
          resolve();
        }, SYNC_MS);
        this.syncs.set(sync, () => {
          clearTimeout(timer);
          resolve();
        });
        this.send({ t: 'sync', n: sync });
      });
    }
    return this.silenced.get(id) ?? null;
  }

  /**
   * Whether the keeper killed job `id` at its deadline, with how long ZooKeeper had been
   * silent then, or null: read after {@link silencedFor}, whose sync brings every notice in.
   */
  unheardFor(id: number): number | null {
    return this.unheard.get(id) ?? null;
  }

  /** Calls `listener` with each job the keeper kills at its deadline (for the worker's log). */
  onUnheard(listener: (silentMs: number) => void): () => void {
    this.unheardListeners.add(listener);
    return () => this.unheardListeners.delete(listener);
  }

  private send(msg: object): void {
    this.ensure();
    this.control?.write(`${JSON.stringify(msg)}\n`);
  }

  /**
   * Heartbeats while a job with a silence limit or a deadline is registered: often enough for
   * the shortest limit, and at most {@link BEAT_MS} apart, so a deadline moves with the replies.
   */
  private beatEvery(): void {
    if (this.beat) clearInterval(this.beat);
    this.beat = null;
    const limits = [...this.jobs.values()].flatMap((job) =>
      job.silenceMs === null ? [] : [job.silenceMs],
    );
    if (limits.length === 0 && this.deadlines.size === 0) return;
    const every = Math.max(20, Math.min(BEAT_MS, Math.floor(Math.min(...limits) / 10)));
    this.beat = setInterval(() => this.sendBeat(), every);
    this.beat.unref();
  }

  /** A heartbeat, with each job's deadline as the worker sees it now. */
  private sendBeat(): void {
    if (this.deadlines.size === 0) {
      this.send({ t: 'beat' });
      return;
    }
    const until: GivenDeadlines = [];
    for (const [id, deadline] of this.deadlines) {
      const due = deadline();
      until.push(due === null ? [id] : [id, due.at, due.heardAt]);
    }
    this.send({ t: 'beat', until });
  }

  /** Starts the keeper when none runs (first use, or it died): it is told everything again. */
  private ensure(): void {
    if (this.child !== null) return;
    const child = spawn(process.execPath, ['-', 'zoott-job-keeper', String(process.pid)], {
      // fd 0 the program, 1 its notices, 2 its errors, 3 the control pipe.
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
      // Its own session: a signal to the worker's process group or terminal does not reach it.
      detached: true,
      cwd: '/',
      env: {},
    });
    this.child = child;
    const control = child.stdio[3] as Writable;
    this.control = control;
    control.on('error', () => undefined);
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(keeperSource());
    this.listen(child.stdout!);
    child.stderr!.on('data', (b: Buffer) => process.stderr.write(`zoott job keeper: ${b}`));
    child.once('exit', () => {
      if (this.child !== child) return;
      this.child = null;
      this.control = null;
      for (const done of this.syncs.values()) done();
      this.syncs.clear();
    });
    // The worker's own exit (or a library's) is never held up by its keeper.
    child.unref();
    for (const stream of [child.stdout, child.stderr, control] as unknown as {
      unref?: () => void;
    }[])
      stream.unref?.();
    if (this.root !== null) control.write(`${JSON.stringify({ t: 'root', path: this.root })}\n`);
    for (const [id, job] of this.jobs)
      control.write(`${JSON.stringify({ t: 'add', id, ...job })}\n`);
  }

  private listen(out: Readable): void {
    let rest = '';
    out.setEncoding('utf8');
    out.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        let message: { t?: string; ids?: number[]; silentMs?: number; n?: number };
        try {
          message = JSON.parse(line);
        } catch {
          continue;
        }
        if (message.t === 'silenced')
          for (const id of message.ids ?? []) this.silenced.set(id, message.silentMs ?? 0);
        else if (message.t === 'unheard')
          for (const id of message.ids ?? []) {
            this.unheard.set(id, message.silentMs ?? 0);
            for (const listener of this.unheardListeners) listener(message.silentMs ?? 0);
          }
        else if (message.t === 'synced') {
          this.syncs.get(message.n ?? -1)?.();
          this.syncs.delete(message.n ?? -1);
        }
      }
    });
  }
}

let link: KeeperLink | undefined;

/** This process's link to its job keeper (made on first use; the keeper starts with a job). */
export function keeperLink(): KeeperLink {
  link ??= new KeeperLink();
  return link;
}

export type { KeeperLink };
