import { isZoottError, utf8 } from '@zoott/core';
import { digestOf } from '@zoott/core/internal';
import {
  makeAclEntry,
  makeDigest,
  makeDigestAcl,
  parseAcl,
  permToLong,
  permToShort,
} from '@zoott/core/recipes';
import { describeOnBackends } from '@zoott/testing';
import { describe, expect, it } from 'vitest';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isZoottError(err) ? err.code : 'not a ZoottError';
  }
  return undefined;
}

describe('digests and entries', () => {
  it('makes ZooKeeper digests', () => {
    expect(makeDigest('xp:123')).toBe('LNcZO17uqqJ4GuYoSclIsGjYniQ=');
    expect(makeDigest('username:password')).toBe('+Ir5sN1lGJEEs8xBZhZXKvjLJ7c=');
    expect(makeDigest('aa:')).toBe('E/ZoYMT80fFT7vhICWyvMdWNt7o=');
    expect(codeOf(() => makeDigest('nocolon'))).toBe('INVALID_ACL_SPEC');
  });

  it('makes digest:<user>:<digest>:<perms> entries, keeping the given letters', () => {
    expect(makeAclEntry('aabb', 'abc123', 'cdrwa')).toBe(
      'digest:aabb:t9MeAsoEPfdQEQjqbWtw8EHD9T0=:cdrwa',
    );
    expect(makeAclEntry('zookeeper_user', 'MT80fFT7vh', '')).toBe(
      'digest:zookeeper_user:Ds8aM7UNwfAlTN3IRdkBoCno9FM=:',
    );
    expect(makeAclEntry('u', 'p', ['c', 'r', 'r']).endsWith(':crr')).toBe(true);
    for (const bad of ['abc', ['cde'], ['a', 'v'], ['rw'], 'CDRWA']) {
      expect(codeOf(() => makeAclEntry('u', 'p', bad))).toBe('INVALID_ACL_SPEC');
    }
  });

  it('converts permissions between short and long forms, in either case', () => {
    expect(permToLong('rw')).toEqual(['read', 'write']);
    expect(permToLong(['c', 'r', 'r'])).toEqual(['create', 'read', 'read']);
    expect(permToLong('CDRWA')).toEqual(['create', 'delete', 'read', 'write', 'admin']);
    expect(permToLong('cdrwa', { lower: false })).toEqual([
      'CREATE',
      'DELETE',
      'READ',
      'WRITE',
      'ADMIN',
    ]);
    expect(permToShort(['create', 'delete', 'read', 'write', 'admin'], { lower: false })).toBe(
      'CDRWA',
    );
    expect(permToShort(['CREATE', 'READ'])).toBe('cr');
    expect(permToShort([])).toBe('');
    expect(codeOf(() => permToLong('abc'))).toBe('INVALID_ACL_SPEC');
    expect(codeOf(() => permToShort(['foo']))).toBe('INVALID_ACL_SPEC');
  });

  it('converts [user, password, perms] lists to contract ACLs and back', () => {
    const acl = makeDigestAcl([
      ['xp', '123', 'cdrwa'],
      ['foo', 'bar', 'cd'],
    ]);
    expect(acl).toEqual([
      { scheme: 'digest', id: 'xp:LNcZO17uqqJ4GuYoSclIsGjYniQ=', perms: 31 },
      { scheme: 'digest', id: digestOf('foo', 'bar'), perms: 12 },
    ]);
    expect(makeDigestAcl(null)).toBeNull();
    expect(parseAcl([{ scheme: 'world', id: 'anyone', perms: 31 }, ...(acl ?? [])])).toEqual([
      ['world', 'anyone', 'cdrwa'],
      ['digest', 'xp', 'cdrwa'],
      ['digest', 'foo', 'cd'],
    ]);
    expect(codeOf(() => makeDigestAcl([['xp', '123', 'x']]))).toBe('INVALID_ACL_SPEC');
  });
});

describeOnBackends('ACL helpers', (backend) => {
  it('guard nodes on the server: the digest user gets in, others do not', async () => {
    const owner = await backend().connect();
    const stranger = await backend().connect();
    await owner.addAuth('digest', 'xp:123');
    const acl = makeDigestAcl([
      ['xp', '123', 'cdrwa'],
      ['foo', 'bar', 'r'],
    ])!;
    await owner.create('/guarded', utf8.encode('{}'), { acl });
    expect(parseAcl((await owner.getAcl('/guarded')).acl)).toEqual([
      ['digest', 'xp', 'cdrwa'],
      ['digest', 'foo', 'r'],
    ]);
    await owner.set('/guarded', utf8.encode('{"a":1}'));
    await expect(stranger.get('/guarded')).rejects.toMatchObject({ code: 'NO_AUTH' });
    await stranger.addAuth('digest', 'foo:bar');
    expect(utf8.decode((await stranger.get('/guarded')).data)).toBe('{"a":1}');
    await expect(stranger.set('/guarded', utf8.encode('{}'))).rejects.toMatchObject({
      code: 'NO_AUTH',
    });
  });
});
