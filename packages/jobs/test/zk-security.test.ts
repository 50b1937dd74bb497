import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digestAcl, Perms } from '@zoott/core';
import { afterAll, describe, expect, it } from 'vitest';
import {
  maskAclEntry,
  maskZkSecurity,
  parseAclEntry,
  rejoinAclEntries,
  ZK_SECURITY_SETTINGS,
  zkSecurityHint,
  zkSecurityOptions,
} from '../src/config.js';
import { aclFromSettings } from '../src/daemon-access.js';

// The settings every program shares for a secured ZooKeeper, and the ACL entries of the
// x509 and sasl schemes, as pure functions (the binaries drive them in their own tests).

const dir = mkdtempSync(join(tmpdir(), 'zoott-zk-security-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('ACL entries', () => {
  it('reads digest, x509 and sasl entries', () => {
    expect(parseAclEntry('alice:pw:cdrwa', 'acl[0]')).toEqual(digestAcl('alice', 'pw', 'cdrwa'));
    expect(parseAclEntry('digest:bob:p:w:r', 'acl[0]')).toEqual(digestAcl('bob', 'p:w', 'r'));
    expect(parseAclEntry('x509:CN=alice,OU=ops,O=example:cdrwa', 'acl[0]')).toEqual({
      scheme: 'x509',
      id: 'CN=alice,OU=ops,O=example',
      perms: Perms.ALL,
    });
    expect(parseAclEntry('sasl:ops:rw', 'acl[0]')).toEqual({
      scheme: 'sasl',
      id: 'ops',
      perms: Perms.READ | Perms.WRITE,
    });
  });

  it('says what is wrong, never showing a password', () => {
    expect(() => parseAclEntry('sasl:a:b:r', '--acl[0]')).toThrow(
      /--acl\[0\]: a SASL user has no colon/,
    );
    expect(() => parseAclEntry('x509::r', 'acl[1]')).toThrow(/acl\[1\]: not one of the forms/);
    expect(() => parseAclEntry('alice:s3cret:q', 'acl[0]')).toThrow(/permissions "q"/);
    expect(() => parseAclEntry('alice:s3cret:', 'acl[0]')).toThrow(/no permission given/);
    expect(() => parseAclEntry('alice:s3cret:', 'acl[0]')).not.toThrow(/s3cret/);
    expect(() => parseAclEntry('x509:CN=a:', 'acl[0]')).toThrow(/no permission given/);
    expect(() => parseAclEntry('nocolon', 'acl[0]')).toThrow(/x509:<certificate subject>:perms/);
  });

  it('puts back together entries a comma-separated flag or variable cut inside a subject', () => {
    expect(rejoinAclEntries('x509:CN=a,OU=b,O=c:cdrwa,sasl:ops:r,alice:pw:rw'.split(','))).toEqual([
      'x509:CN=a,OU=b,O=c:cdrwa',
      'sasl:ops:r',
      'alice:pw:rw',
    ]);
    expect(rejoinAclEntries(['open'])).toEqual(['open']);
    expect(aclFromSettings('x509:CN=a,O=b:r,sasl:s:cdrwa'.split(','), false)).toEqual([
      { scheme: 'x509', id: 'CN=a,O=b', perms: Perms.READ },
      { scheme: 'sasl', id: 's', perms: Perms.ALL },
    ]);
  });

  it('shows x509 and sasl ids as they are, digest passwords masked', () => {
    expect(maskAclEntry('x509:CN=a,O=b:cdrwa')).toBe('x509:CN=a,O=b:cdrwa');
    expect(maskAclEntry('sasl:ops:r')).toBe('sasl:ops:r');
    expect(maskAclEntry('alice:pw:cdrwa')).toBe('alice:****:cdrwa');
    expect(maskAclEntry('digest:bob:p:w:r')).toBe('digest:bob:****:r');
  });
});

describe('secured-connection settings', () => {
  const ca = file('ca.pem', 'CA');
  const cert = file('cert.pem', 'CERT');
  const key = file('key.pem', 'KEY');

  it('reads the files they name into connectZk options', () => {
    const pass = file('pass', 'from-file\nsecond line ignored\n');
    const login = file('login', 'ops:se:cret\n');
    expect(
      zkSecurityOptions({
        zkTlsCa: ca,
        zkTlsCert: cert,
        zkTlsKey: key,
        zkTlsKeyPassphraseFile: pass,
        zkTlsSkipHostnameCheck: true,
        zkSaslFile: login,
      }),
    ).toEqual({
      tls: {
        ca: Buffer.from('CA'),
        cert: Buffer.from('CERT'),
        key: Buffer.from('KEY'),
        passphrase: 'from-file',
        verifyHostname: false,
      },
      sasl: { username: 'ops', password: 'se:cret' },
    });
    // --zk-tls alone: TLS with the defaults; nothing at all: neither.
    expect(zkSecurityOptions({ zkTls: true })).toEqual({ tls: {} });
    expect(zkSecurityOptions({})).toEqual({});
    expect(zkSecurityOptions({ zkTlsCa: ca, zkSasl: 'a:b' })).toEqual({
      tls: { ca: Buffer.from('CA') },
      sasl: { username: 'a', password: 'b' },
    });
  });

  it('refuses what cannot work, naming the flag, variable or file key it came from', () => {
    const cases: Array<[Parameters<typeof zkSecurityOptions>, RegExp]> = [
      [
        [{ zkTlsCa: join(dir, 'none.pem') }, { zkTlsCa: 'flag' }],
        /^INVALID_CONFIG: --zk-tls-ca: cannot read .*none\.pem \(ENOENT\)/,
      ],
      [
        [{ zkTlsKey: key }, { zkTlsKey: 'env' }],
        /ZOOTT_ZK_TLS_KEY: a client certificate and its key go together/,
      ],
      [
        [{ zkTls: false, zkTlsCa: ca }, { zkTls: 'file' }, 'z.yaml'],
        /z\.yaml: zkTls: is false, but TLS files are given/,
      ],
      [
        [{ zkTlsKeyPassphrase: 'p' }, { zkTlsKeyPassphrase: 'env' }],
        /ZOOTT_ZK_TLS_KEY_PASSPHRASE: is a TLS setting, and TLS is off/,
      ],
      [
        [{ zkTls: true, zkTlsKeyPassphrase: 'p' }, {}],
        /zkTlsKeyPassphrase: is the passphrase of --zk-tls-key, and none is given/,
      ],
      [
        [
          {
            zkTls: true,
            zkTlsCert: cert,
            zkTlsKey: key,
            zkTlsKeyPassphrase: 'p',
            zkTlsKeyPassphraseFile: key,
          },
          {},
        ],
        /give the key passphrase once/,
      ],
      [[{ zkSasl: 'ops' }, { zkSasl: 'flag' }], /--zk-sasl: expected user:password$/],
      [
        [{ zkSasl: 'ops:' }, { zkSasl: 'flag' }],
        /--zk-sasl: expected user:password \(got "ops:", no password\)/,
      ],
      [[{ zkSasl: 'a:b', zkSaslFile: key }, {}], /give the SASL login once/],
    ];
    for (const [args, message] of cases)
      expect(() => zkSecurityOptions(...args), String(message)).toThrow(message);
  });

  it('shows secrets masked, and every row has an example that is not its default', () => {
    expect(maskZkSecurity('zkSasl', 'ops:secret')).toBe('ops:****');
    expect(maskZkSecurity('zkTlsKeyPassphrase', 'secret')).toBe('****');
    expect(maskZkSecurity('zkTlsCa', '/etc/ca.pem')).toBe('/etc/ca.pem');
    for (const s of ZK_SECURITY_SETTINGS) {
      expect(s.example, s.key).not.toBe('');
      expect(s.flag, s.key).toMatch(/^--zk-/);
      expect(s.env, s.key).toMatch(/^ZOOTT_ZK_/);
    }
  });

  it('gives the setting to change for each field a connect error names', () => {
    expect(zkSecurityHint({ field: 'tls.ca' })).toMatch(/--zk-tls-ca/);
    expect(zkSecurityHint({ field: 'tls.verifyHostname' })).toMatch(/--zk-tls-skip-hostname-check/);
    expect(zkSecurityHint({ field: 'tls.key' })).toMatch(/--zk-tls-key/);
    expect(zkSecurityHint({ field: 'tls' })).toMatch(/secureClientPort takes TLS/);
    expect(zkSecurityHint({ field: 'sasl' })).toMatch(/--zk-sasl-file/);
    expect(zkSecurityHint({ field: 'auth' })).toBeNull();
    expect(zkSecurityHint({})).toBeNull();
  });
});
