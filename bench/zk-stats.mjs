// What the bench reads from the ZooKeeper server itself: `mntr` (node count, approximate
// data size) and, for a local server, the JVM's heap (jcmd) and RSS of the process that
// listens on the client port.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { fourLetter } from '../packages/zk-testkit/dist/index.js';

const run = promisify(execFile);

/** `mntr` as numbers: `{ zk_znode_count, zk_approximate_data_size, ... }`. */
export async function mntr(connectString) {
  const text = await fourLetter(connectString.replace(/\/.*$/, ''), 'mntr');
  const out = {};
  for (const line of text.split('\n')) {
    const [k, v] = line.split('\t');
    if (k && v !== undefined && /^-?\d+(\.\d+)?$/.test(v.trim())) out[k] = Number(v);
  }
  return out;
}

/** The pid of the process listening on the port of `connectString` (null when unknown). */
export async function serverPid(connectString) {
  const port = connectString.replace(/\/.*$/, '').split(':').pop();
  try {
    const { stdout } = await run('ss', ['-ltnpH', `sport = :${port}`]);
    const m = /pid=(\d+)/.exec(stdout);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Heap used by the server's JVM and its RSS, in MB (`null` where not measurable). */
export async function serverMemory(connectString) {
  const pid = await serverPid(connectString);
  if (pid === null) return { heap_used_mb: null, rss_mb: null };
  let heap = null;
  try {
    const { stdout } = await run('jcmd', [String(pid), 'GC.heap_info']);
    // G1: " garbage-first heap   total 524288K, used 123456K"; others name their spaces.
    const m = /total\s+(\d+)K,\s+used\s+(\d+)K/.exec(stdout);
    if (m) heap = Number(m[2]) / 1024;
  } catch {
    // No jcmd, or another user's JVM.
  }
  let rss = null;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (m) rss = Number(m[1]) / 1024;
  } catch {
    // Not Linux.
  }
  return {
    heap_used_mb: heap === null ? null : Number(heap.toFixed(1)),
    rss_mb: rss === null ? null : Number(rss.toFixed(1)),
  };
}

let clockTicks = null;

/**
 * CPU time (user + system, all threads, µs) the process `pid` has used so far, from
 * /proc/<pid>/stat; null when unreadable (no procfs, the process gone).
 */
export async function processCpuUs(pid) {
  if (pid === null) return null;
  try {
    if (clockTicks === null) clockTicks = Number((await run('getconf', ['CLK_TCK'])).stdout);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces: utime and
    // stime are fields 14 and 15 of the line, 12 and 13 after the ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / clockTicks) * 1e6;
  } catch {
    return null;
  }
}

/**
 * The machine's CPU ticks so far, from the first line of /proc/stat: `{ busy, total }` (idle
 * and iowait are not busy); null without procfs.
 */
export function machineCpu() {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1);
    const ticks = f.slice(0, 8).map(Number);
    const total = ticks.reduce((a, b) => a + b, 0);
    return { busy: total - ticks[3] - ticks[4], total };
  } catch {
    return null;
  }
}

/** The share of the machine's CPU time that was busy between two `machineCpu()` readings. */
export function busyShare(from, to) {
  if (from === null || to === null || to.total <= from.total) return null;
  return Number(((to.busy - from.busy) / (to.total - from.total)).toFixed(2));
}
