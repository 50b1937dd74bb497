import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type CredentialRules,
  checkLogLevel,
  credentialsOf,
  mergeSettingSources,
  readAuthFile,
  readSettingValue,
  type SettingSpecBase,
  type ValueRules,
} from '../src/config.js';

// The one reader of setting values and credentials that zoott-worker (the defaults) and
// zoott-amqp-bridge (its own rules) share: the rules are where the programs differ.

const BRIDGE_LIKE: ValueRules = { minInt: 1, quoteRejected: false };
const TERSE_CREDENTIALS: CredentialRules = {
  quoteRejected: false,
  readError: 'message',
  refuseEmptyFile: false,
};

const spec = (kind: SettingSpecBase['kind']): SettingSpecBase<'n'> => ({
  key: 'n',
  flag: '--n',
  env: 'N',
  kind,
  arg: 'x',
  help: 'a setting',
});

describe('setting values', () => {
  it('reads each kind the same way for every program', () => {
    expect(readSettingValue(spec('int'), ' 7 ', '--n')).toBe(7);
    expect(readSettingValue(spec('bool'), 'Yes', '--n')).toBe(true);
    expect(readSettingValue(spec('bool'), '0', '--n')).toBe(false);
    expect(readSettingValue(spec('list'), 'a, b,,c', '--n')).toEqual(['a', 'b', 'c']);
    expect(readSettingValue(spec('list'), [' a ', ''], '--n')).toEqual(['a']);
    expect(() => readSettingValue(spec('bool'), 'maybe', 'N')).toThrow(
      'N: must be true or false, got "maybe"',
    );
  });

  it('takes the smallest whole number from the rules', () => {
    expect(readSettingValue(spec('int'), '0', '--n')).toBe(0);
    expect(() => readSettingValue(spec('int'), '0', '--n', BRIDGE_LIKE)).toThrow(
      '--n: must be a whole number >= 1, got "0"',
    );
    expect(() => readSettingValue(spec('int'), -1, 'f: n')).toThrow(
      'f: n: must be a whole number >= 0, got -1',
    );
  });

  it('quotes a rejected string, list or log level only where the rules say so', () => {
    expect(() => readSettingValue(spec('string'), '', '--n')).toThrow(
      '--n: must be a non-empty string, got ""',
    );
    expect(() => readSettingValue(spec('list'), ['a', 3], 'N')).toThrow(
      'N: must be a list of strings, got ["a",3]',
    );
    expect(() => readSettingValue(spec('string'), '', '--n', BRIDGE_LIKE)).toThrow(
      / --n: must be a non-empty string$/,
    );
    expect(() => readSettingValue(spec('list'), ['pw', 3], 'N', BRIDGE_LIKE)).toThrow(
      / N: must be a list of strings$/,
    );
    expect(() => checkLogLevel('loud')).toThrow(/logLevel: must be one of .*silent, got loud$/);
    expect(() => checkLogLevel('loud', BRIDGE_LIKE)).toThrow(/logLevel: must be one of .*silent$/);
    expect(() => checkLogLevel(undefined)).not.toThrow();
  });

  it('takes only its own values for a string setting with a fixed set, naming them', () => {
    const modes = { ...spec('string'), values: ['on', 'off'] };
    expect(readSettingValue(modes, 'off', '--n')).toBe('off');
    expect(() => readSettingValue(modes, 'On', '--n')).toThrow(
      '--n: must be one of on, off, got "On"',
    );
    // A config file's boolean, too: told the values, not that it is no string.
    expect(() => readSettingValue(modes, false, 'f.yaml: n')).toThrow(
      'f.yaml: n: must be one of on, off, got false',
    );
    expect(() => readSettingValue(modes, '', '--n', BRIDGE_LIKE)).toThrow(
      / --n: must be one of on, off$/,
    );
  });

  it('takes a flag over the environment over the file, recording the source', () => {
    const table = [spec('int'), { ...spec('string'), key: 'm' as const, flag: '--m', env: 'M' }];
    const merged = mergeSettingSources(table, {
      flags: { n: '3' },
      env: { N: '4', M: '' },
      file: { n: 5, m: 'from-file' },
      fileName: 'f.yaml',
    });
    expect(merged).toEqual({
      values: { n: 3, m: 'from-file' },
      sources: { n: 'flag', m: 'file' },
    });
    expect(() => mergeSettingSources(table, { file: { nn: 1 }, fileName: 'f.yaml' })).toThrow(
      'f.yaml: nn: unknown setting (known: n, m)',
    );
    expect(() => mergeSettingSources(table, { file: [1] })).toThrow(
      'config file: must hold a mapping of settings',
    );
  });
});

describe('credentials', () => {
  const dir = mkdtempSync(join(tmpdir(), 'zoott-credentials-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads auth entries then the auth file, with each program’s rules', () => {
    const file = join(dir, 'auth');
    writeFileSync(file, '# ops\ndigest:bob:x:y\n\n', { mode: 0o600 });
    expect(credentialsOf({ auth: ['alice:pw'], authFile: file })).toEqual([
      { scheme: 'digest', auth: 'alice:pw' },
      { scheme: 'digest', auth: 'bob:x:y' },
    ]);
    expect(() => credentialsOf({ auth: ['digest:bob:'] })).toThrow(
      'auth[0]: expected user:password or digest:user:password (got "digest:bob:****")',
    );
    expect(() => credentialsOf({ auth: ['digest:bob:'] }, TERSE_CREDENTIALS)).toThrow(
      / auth\[0\]: expected user:password or digest:user:password$/,
    );
  });

  it('an empty auth file is refused or adds none; an unreadable one is explained', () => {
    const empty = join(dir, 'empty');
    writeFileSync(empty, '# nobody yet\n', { mode: 0o600 });
    expect(() => readAuthFile(empty)).toThrow(`auth file ${empty} holds no credential`);
    expect(readAuthFile(empty, TERSE_CREDENTIALS)).toEqual([]);
    const missing = join(dir, 'missing');
    expect(() => readAuthFile(missing)).toThrow(`cannot read the auth file ${missing} (ENOENT)`);
    expect(() => readAuthFile(missing, TERSE_CREDENTIALS)).toThrow(
      `cannot read the auth file ${missing} (ENOENT: no such file or directory, open '${missing}')`,
    );
  });
});
