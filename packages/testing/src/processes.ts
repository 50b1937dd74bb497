// Linux /proc views for tests of job processes: which run, in which group, carrying what.
import { readdirSync, readFileSync } from 'node:fs';

/** Linux /proc view: state letter and process group of a pid, or null when it is gone. */
function procStat(pid: number): { state: string; pgrp: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces; fields follow the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, pgrp: Number(fields[2]) };
  } catch {
    return null;
  }
}

/** Whether `pid` still runs (a zombie awaiting its reaper does not count). */
export function isRunning(pid: number): boolean {
  const st = procStat(pid);
  return st !== null && st.state !== 'Z' && st.state !== 'X';
}

/** Pids of running (non-zombie) members of process group `pgid`. */
export function runningGroupMembers(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      const st = procStat(pid);
      return st !== null && st.pgrp === pgid && st.state !== 'Z' && st.state !== 'X';
    });
}

/** Polls `cond` until it holds or `ms` pass; returns its last value. Kill delivery is async. */
export async function eventually(cond: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return cond();
}

/** Pids of running processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z' || state === 'X') continue;
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (cmd.includes(marker)) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Kills leftover processes carrying `marker` (test cleanup only). */
export function killMarked(marker: string): void {
  for (const pid of processesWith(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
