/**
 * zoott's global settings are rows of the one settings-table format (src/global-settings.ts):
 * the built `zoott --help` and the README's "Global options" tables say what the rows say,
 * and no global option is left out of them. The connect timeout has one unit, ms, in its
 * variable and config key; its flag takes a duration with a unit, a bare number still being
 * seconds with a warning. Every form is driven through the built binary against a server
 * that accepts connections and never answers, so the wait is the connect timeout: the error
 * names it (`no answer within 0.5 s`), and the run lasts at least that long.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { helpFindings, readmeFindings, unitFindings } from '@zoott/jobs/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLOBAL_SETTINGS, GLOBAL_SWITCHES, switchReadmeRow } from '../src/global-settings.js';
import { assertBuilt, zoott } from './helpers.js';

const README = fileURLToPath(new URL('../README.md', import.meta.url));

/** The global options `zoott --help` lists: the long flag of each line of its Options. */
function helpOptions(help: string): string[] {
  const lines = help.split('\n');
  const from = lines.indexOf('Options:');
  const to = lines.indexOf('Commands:');
  return lines
    .slice(from + 1, to)
    .map((line) => /^ {2}(?:-\w, )?(--[\w-]+)/.exec(line)?.[1])
    .filter((flag): flag is string => flag !== undefined);
}

describe('the global options: one table, --help and the README', () => {
  it('shows every row in --help as the table says, and lists no option the tables lack', async () => {
    assertBuilt();
    const r = await zoott(['--help']);
    expect(r.code, r.stderr).toBe(0);
    expect(helpFindings(GLOBAL_SETTINGS, r.stdout)).toEqual([]);
    const known = [
      ...GLOBAL_SETTINGS.map((row) => row.flag),
      ...GLOBAL_SWITCHES.map((s) => s.flags.split(' ')[0]),
      '--version',
      '--help',
    ];
    expect(helpOptions(r.stdout).sort()).toEqual([...known].sort());
    for (const row of GLOBAL_SETTINGS.filter((s) => s.short !== undefined))
      expect(r.stdout).toContain(`${row.short}, ${row.flag}`);
  });

  it('the README tables are the rows, each setting in one unit', () => {
    const readme = readFileSync(README, 'utf8');
    expect(readmeFindings(GLOBAL_SETTINGS, readme)).toEqual([]);
    for (const option of GLOBAL_SWITCHES) expect(readme).toContain(switchReadmeRow(option));
    expect(unitFindings(GLOBAL_SETTINGS)).toEqual([]);
  });
});

let server: Server;
let silent: string;
const sockets = new Set<Socket>();
const tmp = mkdtempSync(join(tmpdir(), 'zoott-connect-timeout-'));

beforeAll(async () => {
  // Accepts, reads and never answers: a ZooKeeper that does not answer at all.
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  silent = `127.0.0.1:${address.port}`;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
  rmSync(tmp, { recursive: true, force: true });
});

/** A run of `status` against the silent server; its result and how long it took, in ms. */
async function status(args: string[], env: Record<string, string> = {}) {
  const started = Date.now();
  const r = await zoott(['--connect', silent, ...args, 'status'], { env, cwd: tmp });
  return { ...r, tookMs: Date.now() - started };
}

/** A config file holding `lines`; its path. */
function config(name: string, lines: string): string {
  const path = join(tmp, `${name}.yaml`);
  writeFileSync(path, `${lines}\n`, { mode: 0o600 });
  return path;
}

describe('the connect timeout, in one unit', { timeout: 120_000 }, () => {
  it('the flag takes a duration with its unit: 500ms, 1.5s', async () => {
    for (const [flag, shown, ms] of [
      ['500ms', '0.5', 500],
      ['1.5s', '1.5', 1500],
    ] as const) {
      const r = await status(['--connect-timeout', flag]);
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toContain(`no answer within ${shown} s`);
      expect(r.stderr).not.toMatch(/warning/);
      expect(r.tookMs).toBeGreaterThanOrEqual(ms);
    }
  });

  it('a bare number, as old scripts wrote it, is still seconds, with a warning to write the unit', async () => {
    const r = await status(['--connect-timeout', '1']);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(
      'warning: --connect-timeout 1: a number without a unit is read as seconds (1000 ms); write the unit: --connect-timeout 1s',
    );
    expect(r.stderr).toContain('no answer within 1 s');
    expect(r.tookMs).toBeGreaterThanOrEqual(1000);
  });

  it('ZOOTT_CONNECT_TIMEOUT_MS and connectTimeoutMs are ms, the flag winning over both', async () => {
    const fromEnv = await status([], { ZOOTT_CONNECT_TIMEOUT_MS: '700' });
    expect(fromEnv.code, fromEnv.stderr).toBe(3);
    expect(fromEnv.stderr).toContain('no answer within 0.7 s');
    const file = config('ms', 'connectTimeoutMs: 600');
    const fromFile = await status(['--config', file]);
    expect(fromFile.code, fromFile.stderr).toBe(3);
    expect(fromFile.stderr).toContain('no answer within 0.6 s');
    expect(fromFile.stderr).not.toMatch(/deprecated/);
    const envOverFile = await status(['--config', file], { ZOOTT_CONNECT_TIMEOUT_MS: '800' });
    expect(envOverFile.stderr).toContain('no answer within 0.8 s');
    const flagOverAll = await status(['--config', file, '--connect-timeout', '900ms'], {
      ZOOTT_CONNECT_TIMEOUT_MS: '800',
    });
    expect(flagOverAll.stderr).toContain('no answer within 0.9 s');
  });

  it('the old connectTimeout key is read in seconds, with a warning naming connectTimeoutMs', async () => {
    const file = config('seconds', 'cli:\n  connectTimeout: 1');
    const r = await status(['--config', file]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(
      `warning: config file ${file}: connectTimeout: 1 (seconds) is deprecated; write connectTimeoutMs: 1000`,
    );
    expect(r.stderr).toContain('no answer within 1 s');
  });

  it('refuses what is no timeout with exit 2, naming the flag, variable or key', async () => {
    for (const [flag, message] of [
      ['abc', '--connect-timeout "abc": not a duration (a number with a unit: ms, s, m, h, d)'],
      ['10 s', '--connect-timeout "10 s": not a duration'],
      ['0s', '--connect-timeout "0s": must be more than 0'],
      ['-1', 'not a duration'],
    ] as const) {
      const r = await status([`--connect-timeout=${flag}`]);
      expect(r.code, `${flag}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stderr).toMatch(/^hint: /m);
    }
    for (const value of ['5s', '0', '-5', '1.5']) {
      const r = await status([], { ZOOTT_CONNECT_TIMEOUT_MS: value });
      expect(r.code, `${value}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(
        `ZOOTT_CONNECT_TIMEOUT_MS ${JSON.stringify(value)}: must be a positive whole number of ms`,
      );
    }
    const negative = config('negative', 'connectTimeoutMs: -5');
    const bad = await status(['--config', negative]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('connectTimeoutMs -5: must be a positive number of ms');
    const text = config('text', 'connectTimeoutMs: 5s');
    const notNumber = await status(['--config', text]);
    expect(notNumber.code).toBe(2);
    expect(notNumber.stderr).toContain(`config file ${text}: connectTimeoutMs must be a number`);
    const both = config('both', 'connectTimeout: 2\nconnectTimeoutMs: 1000');
    const refused = await status(['--config', both]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `config file ${both}: connectTimeout: 2 (seconds) and connectTimeoutMs: 1000 disagree`,
    );
    expect(refused.stderr).toMatch(/keep only connectTimeoutMs/);
  });
});
