/**
 * `zoott doctor` on the nodes beside a world's areas (progress, meta settings, schedules,
 * rate limits, elections, the race world, race state), with the built `zoott` against a real
 * ZooKeeper: each kind damaged with a raw client, reported in the table and in --json,
 * moved by --repair where that is safe, and a world that is clean again exits 0. And the
 * progress it shows on stderr.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, digestAcl, OPEN_ACL, utf8 } from '@zoott/core';
import { encodeJson } from '@zoott/core/internal';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { assertBuilt, BIN, freshConnect, freshWorld, json, session, zoott } from './helpers.js';

// Every step is a fresh node process talking to ZooKeeper: slow on 2 busy cores.
const SLOW = 180_000;

beforeAll(assertBuilt);

interface Report {
  healthy: boolean;
  findings: { kind: string; path: string; repair: string; detail: string }[];
  moved?: { from: string; to: string }[];
}

/**
 * `zoott <args>` with its stderr on a terminal: util-linux's `script` (Debian's essential
 * bsdutils) gives it a pseudo-terminal; stdout goes to a file. What the terminal showed, and
 * what went to stdout.
 */
async function onTerminal(
  args: string[],
): Promise<{ code: number | null; terminal: string; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'zoott-tty-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const quote = (a: string) => `'${a.replaceAll("'", "'\\''")}'`;
  const out = join(dir, 'stdout');
  const command = [process.execPath, BIN, ...args].map(quote).join(' ');
  const child = spawn('script', ['-qec', `${command} > ${quote(out)}`, '/dev/null'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  let terminal = '';
  child.stdout.on('data', (b: Buffer) => {
    terminal += b.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, terminal, stdout: readFileSync(out, 'utf8') };
}

const lines = (r: Report) => r.findings.map((f) => `${f.kind} ${f.path} ${f.repair}`);

describe('doctor beside the areas', { timeout: SLOW }, () => {
  it('reports progress, settings, schedules, limits, elections and the race world; --repair moves what is safe; fixed by hand it is clean', async () => {
    const connect = await freshConnect();
    const owner = (args: string[]) =>
      zoott(['--connect', connect, '--auth', 'alice:s3cret', '--world', 'dk', ...args]);
    expect((await owner(['init', 'dk', '--buckets', '1'])).code).toBe(0);
    expect((await owner(['queue', 'a', '-t', 't'])).code).toBe(0);
    const add = await owner(['schedule', 'add', 'nightly', '--cron', '0 2 * * *', '--type', 't']);
    expect(add.code, add.stderr).toBe(0);
    expect((await owner(['limit', 'dk', 't', '20/s'])).code).toBe(0);
    expect((await owner(['pause', 'dk', '--type', 'other'])).code).toBe(0);
    const want = [digestAcl('alice', 's3cret', 'cdrwa')];
    const raw = await session(connect);
    await raw.addAuth('digest', 'alice:s3cret');
    // The race world (internal: a worker makes it), then everything under the world's ACL.
    await createEngine(raw, { world: 'dk~races', buckets: 1 }).init();
    expect((await owner(['lock-down', 'dk'])).code).toBe(0);
    const healthy = await owner(['doctor', 'dk']);
    expect(healthy.code, healthy.stdout + healthy.stderr).toBe(0);
    expect(healthy.stdout).toMatch(/world dk: no problems found/);

    // Damage by hand, each node with the world's ACL unless the ACL is the damage.
    const made = (path: string, data?: string) =>
      raw.create(path, data === undefined ? undefined : utf8.encode(data), { acl: want });
    await made('/zoott_g/dk/0000');
    await made('/zoott_g/dk/0000/gone', JSON.stringify({ attempt: 1, log: [] }));
    await made('/zoott_schedules/dk/garbled', 'every night');
    const meta = JSON.parse(utf8.decode((await raw.get('/zoott_dk')).data));
    await raw.set('/zoott_dk', encodeJson({ ...meta, retention: { completed: 'a day' } }));
    await made('/zoott_leaders/dk/scheduler/c-ghost-0000000001', '{"id":"ghost"}');
    await raw.setAcl('/zoott_limits/dk/t', OPEN_ACL);
    await made('/zoott_w/dk~races/0000/r1', '{"worker":"ghost","session":"0","at":1}');
    // Race state where zoott 0.1.0 kept it, for a race of this world.
    const stranger = await session(connect);
    await stranger.create('/zoott_r').catch(() => undefined);
    await stranger.create('/zoott_r/races').catch(() => undefined);
    await stranger.create('/zoott_r/races/race-1', encodeJson({ started: 'now', world: 'dk' }));
    // A race world whose world is gone: reported once, not again from the race world's look.
    await made('/zoott_dkold~races', '{"zoott":1,"buckets":1}');

    const diag = await owner(['--json', 'doctor', 'dk']);
    expect(diag.code, diag.stderr).toBe(7);
    const report = json<Report>(diag);
    expect(report.healthy).toBe(false);
    const all = [
      'corrupt /zoott_dk none',
      'leftover-world /zoott_dkold~races none',
      'orphan /zoott_g/dk/0000/gone quarantine',
      'not-ephemeral /zoott_leaders/dk/scheduler/c-ghost-0000000001 quarantine',
      'weak-acl /zoott_limits/dk/t none',
      'legacy /zoott_r/races/race-1 none',
      'corrupt /zoott_schedules/dk/garbled quarantine',
      'not-ephemeral /zoott_w/dk~races/0000/r1 quarantine',
    ]; // sorted by path
    expect(lines(report)).toEqual(all);
    expect(report.findings[0]?.detail).toMatch(/retention\.completed: must be an object/);

    // The table says the same, one row per finding, and what --repair would do.
    const human = await owner(['doctor', 'dk']);
    expect(human.code).toBe(7);
    for (const f of report.findings) expect(human.stdout).toContain(f.path);
    expect(human.stdout).toMatch(
      /world dk: 8 problem\(s\), 4 that --repair moves to \/zoott_q\/dk/,
    );

    const repaired = await owner(['--json', 'doctor', 'dk', '--repair']);
    expect(repaired.code, repaired.stderr).toBe(7); // a setting, two ACLs and a world are left
    const moved = json<Report>(repaired).moved ?? [];
    expect(moved.map((m) => m.from).sort()).toEqual(
      report.findings
        .filter((f) => f.repair === 'quarantine')
        .map((f) => f.path)
        .sort(),
    );
    const left = await owner(['--json', 'doctor', 'dk']);
    expect(lines(json<Report>(left))).toEqual(all.filter((l) => l.endsWith(' none')));

    // What doctor leaves to people: the setting written again, the ACLs locked down.
    await raw.set('/zoott_dk', encodeJson(meta));
    await raw.delete('/zoott_dkold~races');
    await raw.delete('/zoott_r/races/race-1');
    expect((await owner(['lock-down', 'dk'])).code).toBe(0);
    const clean = await owner(['doctor', 'dk']);
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);
    expect(clean.stdout).toMatch(/world dk: no problems found/);
  });

  it('a world meta no engine can read is reported (exit 7, in --json too), not an error', async () => {
    const connect = await freshConnect();
    const z = (args: string[]) => zoott(['--connect', connect, '--world', 'dm', ...args]);
    expect((await z(['init', 'dm', '--buckets', '2'])).code).toBe(0);
    const raw = await session(connect);
    await raw.set('/zoott_dm', utf8.encode('{"buckets":"two"}'));
    const diag = await z(['--json', 'doctor', 'dm', '--repair']);
    expect(diag.code, diag.stderr).toBe(7);
    const report = json<Report>(diag);
    expect(lines(report)).toEqual(['corrupt /zoott_dm none']);
    expect(report.findings[0]?.detail).toContain('{"zoott":1,"buckets":2}');
    expect(report.moved).toEqual([]);
    const human = await z(['doctor', 'dm']);
    expect(human.code).toBe(7);
    expect(human.stdout).toMatch(
      /corrupt +\/zoott_dm .*no engine, worker or verb can open world dm/,
    );
    await raw.set('/zoott_dm', utf8.encode('{"zoott":1,"buckets":2}'));
    expect((await z(['doctor', 'dm'])).code).toBe(0);
    // Its race world's meta likewise: the world is checked, the race world reported.
    await createEngine(raw, { world: 'dm~races', buckets: 1 }).init();
    await raw.set('/zoott_dm~races', utf8.encode('[]'));
    const races = await z(['--json', 'doctor', 'dm']);
    expect(races.code, races.stderr).toBe(7);
    expect(lines(json<Report>(races))).toEqual(['corrupt /zoott_dm~races none']);
    await raw.set('/zoott_dm~races', utf8.encode('{"zoott":1,"buckets":1}'));
    expect((await z(['doctor', 'dm'])).code).toBe(0);
  });

  it('shows progress on stderr only on a terminal or with --progress (beside --json too), never on stdout', async () => {
    const { connect, z } = await freshWorld(['--buckets', '2']);
    const raw = await session(connect);
    const engine = createEngine(raw, { world: 'tw' });
    for (let i = 0; i < 30; i++) await engine.queue({ name: `t${i}`, type: 't' });
    // 30 tree nodes, 30 entries and the world meta, the 12 shared area nodes, the world's 13
    // nodes beside its tree and its reply and race areas; the parts: namespace, progress,
    // areas, tree, registry, settings, schedules, limits, elections, reply paths, races, race
    // worlds.
    const last = /^checking tw: 90 nodes read, 13\/13 parts done$/;
    const progressLines = (stderr: string) => {
      const lines = stderr.trim().split('\n');
      // Plain lines (stderr is a pipe here): a throttled one now and then, the last at the end.
      for (const line of lines)
        expect(line).toMatch(/^checking tw: \d+ nodes read, \d+\/13 parts done/);
      return lines;
    };

    // On a terminal: a bar redrawn in place (the human form only).
    const connectArgs = ['--connect', connect, '--world', 'tw'];
    const tty = await onTerminal([...connectArgs, 'doctor', 'tw']);
    expect(tty.code, tty.terminal).toBe(0);
    expect(tty.stdout).toBe('world tw: no problems found\n');
    const drawn = tty.terminal.split('\r\u001b[2K').filter((l) => l.trim() !== '');
    expect(drawn.length).toBeGreaterThan(0);
    expect(drawn.at(-1)?.trim()).toBe('checking tw 90 nodes read, 13/13 parts done');
    const ttyJson = await onTerminal([...connectArgs, '--json', 'doctor', 'tw']);
    expect(ttyJson.code, ttyJson.terminal).toBe(0);
    expect(ttyJson.terminal).toBe('');
    expect(JSON.parse(ttyJson.stdout)).toMatchObject({ healthy: true });

    const piped = await z(['doctor', 'tw']);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toBe('world tw: no problems found\n');
    expect(piped.stderr).toBe('');

    const asked = await z(['doctor', 'tw', '--progress']);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toBe('world tw: no problems found\n');
    expect(progressLines(asked.stderr).at(-1)).toMatch(last);

    const both = await z(['--json', 'doctor', 'tw', '--progress']);
    expect(both.code, both.stderr).toBe(0);
    expect(json<Report>(both).healthy).toBe(true);
    expect(progressLines(both.stderr).at(-1)).toMatch(last);

    // A ghost claim to move: the move has its own line, after the reading.
    await raw.create('/zoott_w/tw/0000/ghost', utf8.encode('{}'));
    const repaired = await z(['--json', 'doctor', 'tw', '--repair', '--progress']);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(json<Report>(repaired).moved?.map((m) => m.from)).toEqual(['/zoott_w/tw/0000/ghost']);
    const lines = repaired.stderr.trim().split('\n');
    expect(lines.at(-1)).toBe('moving: 1/1 (100%)');
    expect(lines.at(-2)).toMatch(/^checking tw: 91 nodes read, 13\/13 parts done$/);
  });
});
