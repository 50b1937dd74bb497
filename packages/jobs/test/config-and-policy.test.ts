import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CREATOR_ALL_ACL, digestAcl, OPEN_ACL } from '@zoott/core';
import { DEFAULT_MAX_RESULT_BYTES } from '@zoott/core/jobs';
import { describe, expect, it } from 'vitest';
import {
  aclFromSettings,
  ENTRY_EVENTS_MODES,
  type EntryEventsMode,
  entryEventsOption,
  execPolicy,
  FILE_KEYS,
  globToRegExp,
  jobEnvironment,
  maskCredential,
  parseCredential,
  readConfigFile,
  replyDir,
  resolveSettings,
  SETTINGS,
  settingDefault,
  settingsFor,
} from '../src/internal.js';
import { DEFAULT_KILL_GRACE_MS } from '../src/jobs/regular.js';

describe('the shared config file and credentials', () => {
  it('reads one credential syntax: user:password or digest:user:password', () => {
    expect(parseCredential('alice:se:cret', 'auth')).toEqual({
      scheme: 'digest',
      auth: 'alice:se:cret',
    });
    expect(parseCredential('digest:alice:se:cret', 'auth').auth).toBe('alice:se:cret');
    expect(parseCredential('digest:digest:pw', 'auth').auth).toBe('digest:pw');
    for (const bad of ['nocolon', ':pw', 'alice:', 'digest:'])
      expect(() => parseCredential(bad, 'ZOOTT_AUTH')).toThrow(
        /ZOOTT_AUTH: expected user:password/,
      );
    // The message never repeats a password.
    expect(() => parseCredential('alice:', 'auth')).not.toThrow(/secret/);
    expect(maskCredential('digest:alice:se:cret')).toBe('digest:alice:****');
    expect(maskCredential('alice:x')).toBe('alice:****');
  });

  it('gives each tool the top level it knows plus its own section, and checks both', () => {
    const doc = {
      connect: 'h:1/app',
      lockDir: '/l',
      concurrency: 2,
      cli: { connectTimeout: 3 },
      worker: { world: 'jobs' },
    };
    expect(settingsFor(doc, 'worker', FILE_KEYS, 'f.yaml')).toEqual({
      connect: 'h:1/app',
      concurrency: 2,
      world: 'jobs',
    });
    expect(settingsFor(doc, 'cli', FILE_KEYS, 'f.yaml')).toEqual({
      connect: 'h:1/app',
      lockDir: '/l',
      connectTimeout: 3,
    });
    expect(() => settingsFor({ worker: { lockDir: '/l' } }, 'cli', FILE_KEYS, 'f.yaml')).toThrow(
      /f.yaml: worker.lockDir: unknown worker setting/,
    );
    expect(() => settingsFor({ cli: 3 }, 'worker', FILE_KEYS, 'f.yaml')).toThrow(
      /cli: must be a mapping/,
    );
  });

  it("the table's defaults are the job runner's", () => {
    expect(settingDefault('killGraceMs')).toBe(DEFAULT_KILL_GRACE_MS);
    expect(settingDefault('maxOutputBytes')).toBe(DEFAULT_MAX_RESULT_BYTES);
    expect(new Set(SETTINGS.map((s) => s.flag)).size).toBe(SETTINGS.length);
    expect(new Set(SETTINGS.map((s) => s.env)).size).toBe(SETTINGS.length);
  });
});

describe('settings', () => {
  it('takes a flag over the environment over the file over nothing', () => {
    const s = resolveSettings({
      flags: { world: 'from-flag' },
      env: { ZOOTT_WORLD: 'from-env', ZOOTT_CONCURRENCY: '3' },
      file: { world: 'from-file', concurrency: 9, nodeId: 'n1', allowExec: ['/bin/echo'] },
    });
    expect(s).toEqual({
      world: 'from-flag',
      concurrency: 3,
      nodeId: 'n1',
      allowExec: ['/bin/echo'],
    });
  });

  it('splits lists on commas, from flags (repeated) and environment', () => {
    const s = resolveSettings({
      flags: { allowExec: ['/bin/*', '/usr/bin/env'] },
      env: { ZOOTT_PASS_ENV: 'AWS_REGION, LANGUAGE' },
    });
    expect(s.allowExec).toEqual(['/bin/*', '/usr/bin/env']);
    expect(s.passEnv).toEqual(['AWS_REGION', 'LANGUAGE']);
  });

  it('names the setting and its source when a value is wrong', () => {
    expect(() => resolveSettings({ env: { ZOOTT_CONCURRENCY: 'lots' } })).toThrow(
      /ZOOTT_CONCURRENCY: must be a whole number >= 0, got "lots"/,
    );
    expect(() => resolveSettings({ file: { concurency: 2 }, fileName: 'w.json' })).toThrow(
      /w.json: concurency: unknown setting/,
    );
    expect(() => resolveSettings({ file: { allowExec: '/bin/sh' } })).not.toThrow();
    expect(() => resolveSettings({ file: { allowExec: [1] } })).toThrow(
      /allowExec: must be a list/,
    );
    expect(() => resolveSettings({ flags: { logLevel: 'loud' } })).toThrow(
      /--log-level: must be one of trace, .*, silent, got "loud"/,
    );
    expect(() => resolveSettings({ env: { ZOOTT_LOG_LEVEL: 'Info' } })).toThrow(
      /ZOOTT_LOG_LEVEL: must be one of .*, got "Info"/,
    );
    expect(() => resolveSettings({ env: { ZOOTT_DATASETS: 'sales, bad name' } })).toThrow(
      /ZOOTT_DATASETS: "bad name" is not a dataset name/,
    );
    expect(() => resolveSettings({ file: { datasets: ['ok', '-x'] }, fileName: 'w.json' })).toThrow(
      /w.json: datasets: "-x" is not a dataset name/,
    );
    expect(resolveSettings({ flags: { datasets: 'sales,stock' } }).datasets).toEqual([
      'sales',
      'stock',
    ]);
  });

  it("reads --entry-events as one of its modes, and maps each to runWorker's entryEvents", () => {
    expect(resolveSettings({ env: { ZOOTT_ENTRY_EVENTS: 'children' } }).entryEvents).toBe(
      'children',
    );
    expect(() => resolveSettings({ flags: { entryEvents: 'on' } })).toThrow(
      /--entry-events: must be one of small, children, all, off, got "on"/,
    );
    expect(() => resolveSettings({ file: { entryEvents: false }, fileName: 'w.yaml' })).toThrow(
      /w.yaml: entryEvents: must be one of small, children, all, off, got false/,
    );
    // core's meanings (WorkerOptions.entryEvents): `true` every owned bucket, `false` none.
    expect(ENTRY_EVENTS_MODES.map((m) => entryEventsOption(m))).toEqual([
      'small',
      'children',
      true,
      false,
    ]);
    expect(entryEventsOption(undefined)).toBe('small');
    expect(settingDefault('entryEvents')).toBe('small');
    // A library caller's config does not pass through the table: checked all the same.
    expect(() => entryEventsOption('true' as EntryEventsMode)).toThrow(
      /entryEvents: must be one of small, children, all, off, got "true"/,
    );
  });

  it('reads a JSON config file, and says why it cannot', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zoott-conf-'));
    try {
      writeFileSync(join(dir, 'ok.json'), '{"world":"w","metricsPort":9464}');
      writeFileSync(join(dir, 'bad.json'), '{world:');
      expect(readConfigFile(join(dir, 'ok.json'))).toEqual({ world: 'w', metricsPort: 9464 });
      expect(() => readConfigFile(join(dir, 'bad.json'))).toThrow(/does not parse/);
      expect(() => readConfigFile(join(dir, 'none.json'))).toThrow(/cannot read the config file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('documents every setting with a flag and a variable of its own', () => {
    expect(new Set(SETTINGS.map((s) => s.flag)).size).toBe(SETTINGS.length);
    expect(new Set(SETTINGS.map((s) => s.env)).size).toBe(SETTINGS.length);
    for (const s of SETTINGS) expect(s.env).toMatch(/^ZOOTT_[A-Z_]+$/);
  });
});

describe('executable policy', () => {
  it('allows nothing by default', () => {
    expect(execPolicy([])('/bin/echo')).toBe(false);
  });

  it('matches exact paths and globs (* within a segment, ** across)', () => {
    const allow = execPolicy(['/usr/bin/*', '/opt/tools/**', '/srv/run-?.sh']);
    expect(allow('/usr/bin/grep')).toBe(true);
    expect(allow('/usr/bin/sub/grep')).toBe(false);
    expect(allow('/opt/tools/a/b/c')).toBe(true);
    expect(allow('/srv/run-1.sh')).toBe(true);
    expect(allow('/srv/run-12.sh')).toBe(false);
    expect(allow('/bin/sh')).toBe(false);
    expect(globToRegExp('/a.b/(x)').test('/a.b/(x)')).toBe(true);
    expect(globToRegExp('/a.b').test('/aXb')).toBe(false);
  });

  it('rejects entries that are not absolute', () => {
    expect(() => execPolicy(['sh'])).toThrow(/allowExec\[0\] "sh": must be an absolute path/);
  });

  it('gives jobs a minimal environment plus the pass-through list', () => {
    const env = jobEnvironment(['API_REGION'], {
      PATH: '/bin',
      HOME: '/home/w',
      API_REGION: 'eu',
      ZOOTT_AUTH: 'digest:secret',
      SECRET_TOKEN: 'x',
    });
    expect(env).toEqual({ PATH: '/bin', HOME: '/home/w', API_REGION: 'eu' });
  });
});

describe('reply directory', () => {
  it("maps exchange and routing key to a node path in the world's reply area", () => {
    expect(replyDir({ exchange: 'ex', routingkey: 'rk.1' }, 'jobs')).toBe(
      '/zoott_~replies/jobs/ex/rk.1',
    );
    expect(replyDir({ routingkey: 'rk' }, 'jobs')).toBe('/zoott_~replies/jobs/_default/rk');
    expect(replyDir({ exchange: '', routingkey: 'rk' }, 'v')).toBe('/zoott_~replies/v/_default/rk');
  });

  it('refuses names that cannot be one node', () => {
    expect(() => replyDir({ routingkey: 'a/b' }, 'jobs')).toThrow(
      /routingkey "a\/b": must not contain '\/'/,
    );
    expect(() => replyDir({ routingkey: '..' }, 'jobs')).toThrow(/must be 1..200 characters/);
    expect(() => replyDir({ exchange: 'x\ny', routingkey: 'r' }, 'jobs')).toThrow(/exchange/);
    expect(() => replyDir({ routingkey: 'r' }, 'a/b')).toThrow(/world "a\/b"/);
  });
});

describe('the ACL of the nodes a worker creates', () => {
  it('is the authenticated identity when credentials are given, else open', () => {
    expect(aclFromSettings(undefined, true)).toEqual(CREATOR_ALL_ACL);
    expect(aclFromSettings(undefined, false)).toEqual(OPEN_ACL);
    expect(aclFromSettings(['open'], true)).toEqual(OPEN_ACL);
  });

  it('takes digest entries user:password:perms, passwords with colons included', () => {
    expect(aclFromSettings(['alice:pw:cdrwa', 'bob:a:b:r'], true)).toEqual([
      digestAcl('alice', 'pw', 'cdrwa'),
      digestAcl('bob', 'a:b', 'r'),
    ]);
  });

  it('says what is wrong with a malformed entry', () => {
    expect(() => aclFromSettings(['alice:cdrwa'], true)).toThrow(/acl\[0\].*user:password:perms/);
    expect(() => aclFromSettings(['alice:pw:xyz'], true)).toThrow(/permission/);
  });
});
