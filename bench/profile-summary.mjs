// Summarises the profiles BENCH_CPU_PROF / BENCH_HEAP_PROF write (bench/README.md, "CPU time
// per task"): `node bench/profile-summary.mjs <dir> [tasks] [top]` prints, over every
// .cpuprofile in <dir>, the functions by self time (and their share), and over the
// .heapprofile files of the last run of each worker, the allocation sites by bytes (per task
// when `tasks`, the drained count, is given). Text a reviewer can read, in place of megabytes
// of JSON.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const [dir, tasksArg, topArg] = process.argv.slice(2);
if (!dir) {
  process.stderr.write('usage: node bench/profile-summary.mjs <dir> [tasks] [top]\n');
  process.exit(2);
}
const tasks = tasksArg ? Number(tasksArg) : null;
const top = Number(topArg ?? 30);
const files = readdirSync(dir);

/** `name file:line` of a call frame, with the path cut to the package. */
function frameName(cf) {
  const url = cf.url.replace(/^file:\/\//, '');
  const m = /(packages\/[^/]+\/(?:dist|src)\/.*|node_modules\/.*|bench\/.*)$/.exec(url);
  const where = m ? m[1] : url ? path.basename(url) : '';
  return `${cf.functionName || '(anonymous)'}${where ? ` ${where}:${cf.lineNumber + 1}` : ''}`;
}

function cpuSummary() {
  const self = new Map();
  let total = 0;
  for (const f of files.filter((x) => x.endsWith('.cpuprofile'))) {
    const p = JSON.parse(readFileSync(path.join(dir, f), 'utf8'));
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const dts = p.timeDeltas;
    for (let i = 0; i < p.samples.length; i++) {
      const n = byId.get(p.samples[i]);
      const dt = dts[i] ?? 0;
      // Waiting is not work: shares are of the time the process was busy.
      if (n.callFrame.functionName === '(idle)') continue;
      const k = frameName(n.callFrame);
      self.set(k, (self.get(k) ?? 0) + dt);
      total += dt;
    }
  }
  return { self, total };
}

function heapSummary() {
  // The last run of each worker: the measured drain (earlier runs are its warm-up).
  const last = new Map();
  for (const f of files.filter((x) => x.endsWith('.heapprofile'))) {
    const m = /^worker-(\d+)-run-(\d+)-/.exec(f);
    if (!m) continue;
    const [w, run] = [m[1], Number(m[2])];
    if (!last.has(w) || last.get(w).run < run) last.set(w, { run, f });
  }
  const sites = new Map();
  let total = 0;
  for (const { f } of last.values()) {
    const p = JSON.parse(readFileSync(path.join(dir, f), 'utf8'));
    const selfSize = new Map();
    const walk = (n) => {
      selfSize.set(n.id, { n, size: 0 });
      for (const c of n.children) walk(c);
    };
    walk(p.head);
    // V8 now and then keeps a sample whose node the profile left out: it is not counted.
    for (const s of p.samples) {
      const node = selfSize.get(s.nodeId);
      if (node) node.size += s.size;
    }
    for (const { n, size } of selfSize.values()) {
      if (size === 0) continue;
      const k = frameName(n.callFrame);
      sites.set(k, (sites.get(k) ?? 0) + size);
      total += size;
    }
  }
  return { sites, total, workers: last.size };
}

const out = [];
const { self, total } = cpuSummary();
if (total > 0) {
  out.push(
    `CPU: ${(total / 1e6).toFixed(2)} s busy over the profiles (whole processes: start-up and warm-up included); top ${top} by self time`,
  );
  const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [k, us] of rows)
    out.push(
      `${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`,
    );
}
const heap = heapSummary();
if (heap.total > 0) {
  const per = tasks ? ` = ${(heap.total / tasks / 1024).toFixed(1)} KB per task` : '';
  out.push(
    '',
    `Allocation (sampled, collected objects included), last run of ${heap.workers} workers: ${(heap.total / 2 ** 20).toFixed(1)} MB${per}; top ${top} sites`,
  );
  const rows = [...heap.sites].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [k, b] of rows)
    out.push(
      `${((100 * b) / heap.total).toFixed(1).padStart(5)}%  ${tasks ? `${(b / tasks).toFixed(0).padStart(6)} B/task` : `${(b / 1024).toFixed(0).padStart(8)} KB`}  ${k}`,
    );
}
process.stdout.write(`${out.join('\n')}\n`);
