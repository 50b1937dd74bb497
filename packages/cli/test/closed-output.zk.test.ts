/**
 * A reader that goes away (`zoott status | head`) ends the CLI quietly with exit 0, as Unix
 * tools do, in every verb: the built binary, its stdout a pipe whose reading end is closed
 * before it starts, on a real ZooKeeper. Before, the first write failed with an unhandled
 * EPIPE: a stack trace and exit 1.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, createEngine } from '@zoott/core';
import { publishResult } from '@zoott/jobs/internal';
import { connectZk } from '@zoott/zk-adapter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, BIN, freshWorld, type RunResult, zoott } from './helpers.js';

/**
 * Runs the built `zoott` with stdout (and with `stderr`, stderr too) closed on the reading
 * side; `during` runs meanwhile.
 */
function closedOutput(
  args: string[],
  opts: { stderr?: boolean; during?: () => Promise<void> } = {},
): Promise<RunResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', ZOOTT_CONFIG: '', XDG_CONFIG_HOME: '/nonexistent' },
  });
  // Before the program even started: its first write meets a pipe nobody reads.
  child.stdout!.destroy();
  if (opts.stderr) child.stderr!.destroy();
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b));
  const exited = new Promise<RunResult>((resolve) =>
    child.once('exit', (code) => resolve({ code, stdout: '', stderr })),
  );
  if (opts.during) void opts.during();
  return exited;
}

describe('a closed output ends every verb quietly', { timeout: 300_000 }, () => {
  let connect: string;
  let c: Coordinator;
  let tmp: string;
  const world = 'tw';

  beforeAll(async () => {
    assertBuilt();
    ({ connect } = await freshWorld());
    c = await connectZk(connect);
    tmp = mkdtempSync(join(tmpdir(), 'zoott-closed-'));
    const engine = createEngine(c, { world });
    for (const name of ['t1', 't2', 't3']) await engine.queue({ name, type: 'x' });
    await publishResult(c, { routingkey: 'rk' }, { stdout: 'hi' }, { world });
    writeFileSync(join(tmp, 'job.json'), JSON.stringify({ executable: '/bin/true' }));
    expect((await zoott(['--connect', connect, 'init', 'quiet'])).code).toBe(0);
    const exp = await zoott([
      '--connect',
      connect,
      'export',
      `/zoott_${world}`,
      '--output',
      join(tmp, 'tree.json'),
    ]);
    expect(exp.code, exp.stderr).toBe(0);
  });
  afterAll(async () => {
    await c?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  const at = () => ['--connect', connect, '--world', world];
  /** Each verb of `zoott --help`, with arguments under which it prints something. */
  const VERBS: Record<string, () => string[]> = {
    init: () => [...at(), 'init', 'other'],
    worlds: () => [...at(), 'worlds'],
    'lock-down': () => [...at(), '--auth', 'ops:pw', 'lock-down', 'other'],
    doctor: () => [...at(), 'doctor', world],
    retention: () => [...at(), 'retention', world],
    queue: () => [...at(), 'queue', 'q1', '--type', 'x'],
    submit: () => [...at(), 'submit', join(tmp, 'job.json')],
    wait: () => [...at(), 'wait', 'rk', '--any', '--peek', '--timeout', '30'],
    status: () => [...at(), 'status'],
    tree: () => [...at(), 'tree'],
    ls: () => [...at(), 'ls', 'pending'],
    show: () => [...at(), 'show', 't1'],
    watch: () => [...at(), 'watch', '--count', '1', '--timeout', '60'],
    drain: () => ['--connect', connect, '--world', 'quiet', 'drain', '--timeout', '30'],
    retry: () => [...at(), 'retry', '--all-failed'],
    cancel: () => [...at(), 'cancel', 't2'],
    pause: () => [...at(), 'pause', world],
    resume: () => [...at(), 'resume', world],
    clean: () => [...at(), 'clean', world, '--completed'],
    workers: () => [...at(), 'workers'],
    schedule: () => [...at(), 'schedule', 'list'],
    limit: () => [...at(), 'limit', world],
    parked: () => [...at(), 'parked', world],
    export: () => [...at(), 'export', `/zoott_${world}`],
    import: () => [...at(), 'import', join(tmp, 'tree.json'), '--root', '/copy'],
    lock: () => [...at(), 'lock', 'l1', '--', '/bin/true'],
    dashboard: () => [...at(), 'dashboard', '--port', '0'],
    demo: () => ['demo', '--embedded', '--items', '3', '--workers', '1'],
    help: () => ['help'],
  };

  it('covers every verb zoott --help lists', async () => {
    const help = await zoott(['--help']);
    const commands = help.stdout.slice(help.stdout.indexOf('Commands:'));
    const listed = [...commands.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1]);
    expect(listed.length).toBeGreaterThan(20);
    expect(Object.keys(VERBS).sort()).toEqual([...new Set(listed)].sort());
  });

  /** Runs `verb` with its output closed; watch gets tasks queued until it has ended. */
  async function verbWithClosedOutput(verb: string, stderr: boolean): Promise<RunResult> {
    let ended = false;
    const failures: unknown[] = [];
    const during = async () => {
      for (let i = 0; !ended && i < 600; i++) {
        await createEngine(c, { world })
          .queue({ name: `w-${stderr}-${i}`, type: 'x' })
          .catch((err: unknown) => failures.push(err));
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const r = await closedOutput(VERBS[verb]!(), {
      stderr,
      ...(verb === 'watch' ? { during } : {}),
    });
    ended = true;
    expect(failures).toEqual([]);
    return r;
  }

  // The dashboard prints its URL on stderr and serves until interrupted: with stderr below.
  it.each(Object.keys(VERBS).filter((v) => v !== 'dashboard'))(
    '%s, stdout closed',
    async (verb) => {
      const r = await verbWithClosedOutput(verb, false);
      // Nothing of the verb winding down either: an error after the output closed is not one.
      expect(r.stderr).not.toMatch(/EPIPE|Unhandled|at .*\(node:|^error:/m);
      expect(r.code, r.stderr).toBe(0);
    },
  );

  it.each(Object.keys(VERBS))('%s, stdout and stderr closed', async (verb) => {
    expect((await verbWithClosedOutput(verb, true)).code).toBe(0);
  });

  it('--json documents too', async () => {
    for (const args of [['status'], ['worlds'], ['show', 't1'], ['ls', 'pending']]) {
      const r = await closedOutput([...at(), '--json', ...args]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }
  });
});
