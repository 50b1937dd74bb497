/**
 * The session timeout in the config file has one unit, ms, as every zoott program takes it:
 * `sessionTimeoutMs`. The seconds of the old `sessionTimeout` are still read, converted, with
 * a warning naming the file, both keys and the value to write; both keys disagreeing are
 * refused. Driven through the real `zoott`: the session's length shows in how long a lock
 * whose holder was killed stays held.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { assertBuilt, freshConnect, start, until, zoott } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'zoott-session-timeout-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A config file holding `lines` after the connect string; its path. */
function config(name: string, connect: string, lines: string): string {
  const path = join(tmp, `${name}.yaml`);
  writeFileSync(path, `connect: ${connect}\n${lines}\n`);
  return path;
}

/**
 * Kills a lock's holder (its session then lives one session timeout on the server), and
 * tries to take the lock within `timeoutS`: the exit code and stderr of that try.
 */
async function lockAfterKilledHolder(cfg: string, name: string, timeoutS: number) {
  const holder = start([
    ...['--config', cfg, 'lock', name, '--', process.execPath, '-e'],
    // The command ends on its own soon after: its output pipe closes with it.
    'console.log("held"); setTimeout(() => {}, 3000)',
  ]);
  await until(() => holder.out().includes('held'), 'the holder to run');
  holder.kill('SIGKILL');
  await holder.exited;
  return zoott([
    ...['--config', cfg, 'lock', name, '--timeout', String(timeoutS), '--'],
    ...[process.execPath, '-e', 'console.log("mine")'],
  ]);
}

describe('the session timeout in the config file', { timeout: 120_000 }, () => {
  it('sessionTimeoutMs is read in ms: a 4000 ms session frees the lock in time, no warning', async () => {
    assertBuilt();
    const cfg = config('ms', await freshConnect(), 'sessionTimeoutMs: 4000');
    // Waiting ends about 9 s after the kill: before a session of the default 10 s would end.
    const next = await lockAfterKilledHolder(cfg, 'short', 6);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toBe('mine\n');
    expect(next.stderr).not.toMatch(/deprecated/);
  });

  it('the old sessionTimeout is read in seconds, with a warning saying what to write instead', async () => {
    const cfg = config('seconds', await freshConnect(), 'sessionTimeout: 30');
    // 30 s, not 30 ms (which the server would raise to its minimum, a few seconds): the
    // killed holder's session still holds the lock when the 9 s of waiting run out.
    const next = await lockAfterKilledHolder(cfg, 'long', 9);
    expect(next.code, next.stderr).toBe(6);
    expect(next.stderr).toContain(
      `warning: config file ${cfg}: sessionTimeout: 30 (seconds) is deprecated; write sessionTimeoutMs: 30000`,
    );
  });

  it('both keys disagreeing, or a value that is no timeout, are refused (exit 2) naming the keys', async () => {
    const connect = await freshConnect();
    const both = config('both', connect, 'sessionTimeout: 15\nsessionTimeoutMs: 10000');
    const refused = await zoott(['--config', both, 'worlds']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `config file ${both}: sessionTimeout: 15 (seconds) and sessionTimeoutMs: 10000 disagree`,
    );
    expect(refused.stderr).toMatch(/keep only sessionTimeoutMs/);
    const agreeing = config('agree', connect, 'sessionTimeout: 15\nsessionTimeoutMs: 15000');
    const ok = await zoott(['--config', agreeing, 'worlds']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toMatch(/sessionTimeout: 15 \(seconds\) is deprecated/);
    const negative = config('negative', connect, 'sessionTimeoutMs: -5');
    const bad = await zoott(['--config', negative, 'worlds']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('sessionTimeoutMs -5: must be a positive number of ms');
  });
});
