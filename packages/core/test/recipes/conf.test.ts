import { isZoottError } from '@zoott/core';
import { digestOf } from '@zoott/core/internal';
import { ZK_CONF_DEFAULTS, ZkConf, type ZkConfInit } from '@zoott/core/recipes';
import { describe, expect, it } from 'vitest';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isZoottError(err) ? err.code : 'not a ZoottError';
  }
  return undefined;
}

describe('ZkConf', () => {
  it('takes explicit values, then env, then the file, then defaults', () => {
    const conf = new ZkConf(
      { hosts: '127.0.0.1:9999' },
      {
        env: { ZOOTT_ZK_HOSTS: 'env:1', ZOOTT_ZK_LOCK_DIR: 'env_locks/' },
        file: { lock_dir: 'file_locks/', record_dir: 'file_records/', node_id: 'web-3' },
      },
    );
    expect(conf.hosts()).toBe('127.0.0.1:9999');
    expect(conf.lockDir()).toBe('env_locks/');
    expect(conf.recordDir()).toBe('file_records/');
    expect(conf.nodeId()).toBe('web-3');
    expect(conf.journalDir()).toBe(ZK_CONF_DEFAULTS.journalDir);
    expect(conf.auth()).toBeNull();
    expect([conf.origin('hosts'), conf.origin('lockDir'), conf.origin('recordDir')]).toEqual([
      'explicit',
      'env',
      'file',
    ]);
    expect(conf.origin('journalDir')).toBe('default');
  });

  it('defaults to zkutil dirs and builds absolute paths', () => {
    const conf = new ZkConf();
    expect(conf.hosts()).toBe('127.0.0.1:2181');
    expect(conf.lockDir()).toBe('lock/');
    expect(conf.lock('foo')).toBe('/lock/foo');
    expect(conf.lock(12)).toBe('/lock/0000000012');
    expect(conf.record('r')).toBe('/record/r');
    expect(new ZkConf({ lockDir: '/mycluster/mylocks/' }).lock('x')).toBe('/mycluster/mylocks/x');
    expect(conf.nodeId()).toMatch(/^[0-9a-f]{12}$/);
  });

  it('parses auth and acl from text and lists', () => {
    const conf = new ZkConf(
      {},
      { env: { ZOOTT_ZK_AUTH: 'digest:xp:1:23', ZOOTT_ZK_ACL: 'xp:123:cdrwa, foo:bar:rw' } },
    );
    expect(conf.auth()).toEqual(['digest', 'xp', '1:23']);
    expect(conf.authArgs()).toEqual(['digest', 'xp:1:23']);
    expect(conf.acl()).toEqual([
      ['xp', '123', 'cdrwa'],
      ['foo', 'bar', 'rw'],
    ]);
    expect(conf.digestAcl()).toEqual([
      { scheme: 'digest', id: digestOf('xp', '123'), perms: 31 },
      { scheme: 'digest', id: digestOf('foo', 'bar'), perms: 3 },
    ]);
    const fromFile = new ZkConf(
      {},
      { file: { auth: ['digest', 'a', 'b'], acl: [['a', 'b', 'r']] } },
    );
    expect(fromFile.authArgs()).toEqual(['digest', 'a:b']);
    expect(ZkConf.from('h:1').hosts()).toBe('h:1');
  });

  it('rejects bad values with INVALID_CONFIG naming the field', () => {
    expect(codeOf(() => new ZkConf({ acl: [['xp', '123', 'cdrwx']] }))).toBe('INVALID_CONFIG');
    expect(codeOf(() => new ZkConf({}, { env: { ZOOTT_ZK_AUTH: 'digest' } }))).toBe(
      'INVALID_CONFIG',
    );
    expect(codeOf(() => new ZkConf({}, { file: { lock_dri: 'x' } }))).toBe('INVALID_CONFIG');
    expect(codeOf(() => new ZkConf({}, { file: ['hosts'] }))).toBe('INVALID_CONFIG');
    expect(codeOf(() => new ZkConf({ hosts: '' as string }))).toBe('INVALID_CONFIG');
    expect(() => new ZkConf({}, { file: { lock_dir: 7 }, fileName: 'zoott.yaml' })).toThrow(
      'zoott.yaml: lock_dir',
    );
  });

  it("takes zkutil's dict as written: its snake_case keys, and no key it does not know", () => {
    // zkutil's ZKLock(zkconf=dict(hosts=..., node_id=..., lock_dir=...)), field for field.
    const conf = new ZkConf({ hosts: '10.0.0.9:2181', node_id: 'web-3', lock_dir: 'my_locks/' });
    expect(conf.nodeId()).toBe('web-3');
    expect(conf.lock('foo')).toBe('/my_locks/foo');
    expect(conf.origin('lockDir')).toBe('explicit');
    expect(new ZkConf({ journal_dir: 'j/', record_dir: 'r/' }).record('x')).toBe('/r/x');
    // A key it does not know is a mistake, not a setting to drop in silence.
    const unknown = { hosts: 'h:2181', nodeid: 'web-3' } as unknown as ZkConfInit;
    expect(() => new ZkConf(unknown)).toThrow('unknown field "nodeid"');
    expect(codeOf(() => new ZkConf(unknown))).toBe('INVALID_CONFIG');
    // Both spellings of one field: which one was meant is not ours to guess.
    expect(() => new ZkConf({ nodeId: 'a', node_id: 'b' })).toThrow('nodeId and node_id');
  });
});
