import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  helpFindings,
  maskZkSecurity,
  readmeFindings,
  SETTINGS,
  type SettingSpec,
  unitFindings,
} from '@zoott/jobs/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { BIN, requireBin } from './worker-bin.js';

// Every setting of the one table, driven through the built binary as an operator would:
// only the flag, then only the environment variable, then only the config-file key, read
// back with --print-config --json. A setting added to the table is covered automatically.
const README = fileURLToPath(new URL('../README.md', import.meta.url));

interface Printed {
  configFile: { path: string; from: string } | null;
  settings: Record<string, { value: unknown; source: string }>;
}

let home: string;

/** The environment of a run: nothing zoott-related from the caller's, no default config. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ZOOTT_')) env[k] = v;
  return { ...env, XDG_CONFIG_HOME: join(home, 'xdg'), ...extra };
}

function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: home, env: cleanEnv(env), timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

async function printed(args: string[], env: Record<string, string> = {}): Promise<Printed> {
  const r = await run([...args, '--print-config', '--json'], env);
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Printed;
}

/** What --print-config shows for a setting given its example (passwords masked). */
function expected(spec: SettingSpec): unknown {
  switch (spec.kind) {
    case 'int':
      return Number(spec.example);
    case 'bool':
      return spec.example === 'true';
    case 'list': {
      const items = spec.example.split(',');
      if (spec.key === 'auth') return items.map((a) => a.replace(/:[^:]*$/, ':****'));
      if (spec.key === 'acl') return items.map((a) => a.replace(/:[^:]*:/, ':****:'));
      return items;
    }
    default:
      // The SASL login and the key's passphrase are shown masked.
      return maskZkSecurity(spec.key, spec.example);
  }
}

/** The example in a config file's own form: numbers, booleans and lists, not strings. */
function fileValue(spec: SettingSpec): unknown {
  if (spec.kind === 'int') return Number(spec.example);
  if (spec.kind === 'bool') return spec.example === 'true';
  if (spec.kind === 'list') return spec.example.split(',');
  return spec.example;
}

function flagArgs(spec: SettingSpec): string[] {
  return spec.kind === 'bool' ? [spec.flag] : [spec.flag, spec.example];
}

function writeConfig(name: string, doc: unknown): string {
  const path = join(home, name);
  // Private: a config file that sets credentials may be read by its owner only.
  writeFileSync(path, name.endsWith('.json') ? JSON.stringify(doc) : toYaml(doc), { mode: 0o600 });
  return path;
}

describe('zoott-worker settings, end to end', { timeout: 600_000 }, () => {
  beforeAll(() => {
    requireBin();
    home = mkdtempSync(join(tmpdir(), 'zoott-settings-'));
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('every example differs from its default, so a dropped value cannot pass', async () => {
    const defaults = await printed([]);
    for (const spec of SETTINGS) {
      expect(defaults.settings[spec.key]?.source, spec.key).toBe('default');
      expect(defaults.settings[spec.key]?.value, spec.key).not.toEqual(expected(spec));
    }
  });

  for (const spec of SETTINGS) {
    it(`${spec.key}: ${spec.flag}, ${spec.env} and the file key each take effect`, async () => {
      const file = writeConfig(`${spec.key}.yaml`, { worker: { [spec.key]: fileValue(spec) } });
      // Three separate processes, run side by side.
      const [byFlag, byEnv, byFile] = await Promise.all([
        printed(flagArgs(spec)),
        printed([], { [spec.env]: spec.example }),
        printed(['--config', file]),
      ]);
      expect(byFlag.settings[spec.key]).toEqual({ value: expected(spec), source: 'flag' });
      expect(byEnv.settings[spec.key]).toEqual({ value: expected(spec), source: 'env' });
      expect(byFile.settings[spec.key]).toEqual({ value: expected(spec), source: 'file' });
      expect(byFile.configFile).toEqual({ path: file, from: '--config' });
    });
  }

  it('takes a flag over the environment over the file over the default, for every setting', async () => {
    const all = Object.fromEntries(SETTINGS.map((s) => [s.key, fileValue(s)]));
    const file = writeConfig('all.json', all);
    const env = Object.fromEntries(SETTINGS.map((s) => [s.env, s.example]));
    const flags = SETTINGS.flatMap(flagArgs);
    const viaFlags = await printed(['--config', file, ...flags], env);
    const viaEnv = await printed(['--config', file], env);
    const viaFile = await printed(['--config', file]);
    for (const s of SETTINGS) {
      expect(viaFlags.settings[s.key]?.source, s.key).toBe('flag');
      expect(viaEnv.settings[s.key]?.source, s.key).toBe('env');
      expect(viaFile.settings[s.key]?.source, s.key).toBe('file');
    }
    // And the values themselves, where three distinct ones are easy to write.
    const three = await printed(
      [
        '--config',
        writeConfig('c.yaml', { jobTimeoutMs: 3, world: 'fromfile' }),
        '--job-timeout',
        '1',
      ],
      {
        ZOOTT_JOB_TIMEOUT_MS: '2',
        ZOOTT_WORLD: 'fromenv',
      },
    );
    expect(three.settings.jobTimeoutMs).toEqual({ value: 1, source: 'flag' });
    expect(three.settings.world).toEqual({ value: 'fromenv', source: 'env' });
  });

  it('reads the config file shared with the CLI: top level, worker: section, ZOOTT_CONFIG', async () => {
    const path = writeConfig('zoott.config.yaml', {
      connect: 'shared:2181/app',
      world: 'top',
      lockDir: '/lock', // the CLI's: skipped by the worker
      connectTimeout: 5, // the CLI's
      cli: { world: 'cli-only' },
      worker: { world: 'jobs', concurrency: 3 },
    });
    // Found in the working directory, like the CLI finds it.
    const byDefault = await printed([]);
    expect(byDefault.configFile).toEqual({ path, from: 'default path' });
    expect(byDefault.settings.connect).toEqual({ value: 'shared:2181/app', source: 'file' });
    expect(byDefault.settings.world).toEqual({ value: 'jobs', source: 'file' });
    expect(byDefault.settings.concurrency).toEqual({ value: 3, source: 'file' });
    rmSync(path);
    const elsewhere = writeConfig('elsewhere.json', { world: 'viaenv' });
    const byEnv = await printed([], { ZOOTT_CONFIG: elsewhere });
    expect(byEnv.configFile).toEqual({ path: elsewhere, from: '$ZOOTT_CONFIG' });
    expect(byEnv.settings.world?.value).toBe('viaenv');
  });

  it('rejects a key no tool knows, a bad value and a missing file, naming them (exit 2)', async () => {
    const typo = await run([
      '--config',
      writeConfig('typo.yaml', { worker: { concurency: 2 } }),
      '--print-config',
    ]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/worker\.concurency: unknown worker setting/);
    const top = await run(['--config', writeConfig('top.yaml', { conect: 'x' }), '--print-config']);
    expect(top.code).toBe(2);
    expect(top.stderr).toMatch(/unknown key "conect"/);
    const badInt = await run(['--job-timeout', 'soon', '--print-config']);
    expect(badInt.code).toBe(2);
    expect(badInt.stderr).toMatch(/--job-timeout: must be a whole number/);
    // A setting with a fixed set of values names them, whatever the source; the daemon itself
    // (no --print-config) refuses before it connects anywhere.
    const modes = 'must be one of small, children, all, off';
    const badFlag = await run(['--entry-events', 'on']);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toContain(`--entry-events: ${modes}, got "on"`);
    const badEnv = await run(['--print-config'], { ZOOTT_ENTRY_EVENTS: 'true' });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toContain(`ZOOTT_ENTRY_EVENTS: ${modes}, got "true"`);
    const modeFile = writeConfig('mode.yaml', { worker: { entryEvents: false } });
    const badFile = await run(['--config', modeFile, '--print-config']);
    expect(badFile.code).toBe(2);
    expect(badFile.stderr).toContain(`${modeFile}: entryEvents: ${modes}, got false`);
    const level = await run(['--log-level', 'loud']);
    expect(level.code).toBe(2);
    expect(level.stderr).toContain(
      '--log-level: must be one of trace, debug, info, warn, error, fatal, silent, got "loud"',
    );
    const missing = await run(['--config', join(home, 'nope.yaml'), '--print-config']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.yaml does not exist/);
  });

  it('never prints a password: auth and acl masked, in text and JSON', async () => {
    const authFile = join(home, 'auth');
    writeFileSync(authFile, '# ops\nfiled:hunter2\n', { mode: 0o600 });
    for (const json of [true, false]) {
      const r = await run(
        [
          '--acl',
          'al:topsecret:cdrwa',
          '--auth-file',
          authFile,
          '--print-config',
          ...(json ? ['--json'] : []),
        ],
        { ZOOTT_AUTH: 'digest:bob:pa:ss' },
      );
      expect(r.code).toBe(0);
      expect(r.stdout).not.toMatch(/topsecret|hunter2|pa:ss/);
      expect(r.stdout).toMatch(/digest:bob:\*\*\*\*/);
      expect(r.stdout).toMatch(/al:\*\*\*\*:cdrwa/);
    }
  });

  it('documents every setting in the README table and in --help, as the table says, each in one unit', async () => {
    expect(readmeFindings(SETTINGS, readFileSync(README, 'utf8'))).toEqual([]);
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(helpFindings(SETTINGS, help.stdout)).toEqual([]);
    expect(unitFindings(SETTINGS)).toEqual([]);
  });
});
