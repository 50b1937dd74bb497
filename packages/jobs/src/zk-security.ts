import { readFileSync } from 'node:fs';
import type { ZkSaslOptions, ZkTlsOptions } from '@zoott/zk-adapter';
import type { SettingSource, SettingSpecBase } from './setting-values.js';
import { settingError } from './setting-values.js';

// How every zoott program reaches a secured ZooKeeper: TLS to the servers' secureClientPort
// (CA, client certificate for mutual TLS and x509 ACLs, an encrypted key's passphrase) and a
// SASL DIGEST-MD5 login. One set of settings, the same flag, environment variable and
// config-file key in zoott-worker, zoott-amqp-bridge and the zoott CLI (and so its dashboard).
// Files are named, never inlined: their contents are read when the program connects.

/** The secured-connection settings, as flags, environment and config file give them. */
export interface ZkSecuritySettings {
  zkTls?: boolean;
  zkTlsCa?: string;
  zkTlsCert?: string;
  zkTlsKey?: string;
  zkTlsKeyPassphrase?: string;
  zkTlsKeyPassphraseFile?: string;
  zkTlsSkipHostnameCheck?: boolean;
  zkSasl?: string;
  zkSaslFile?: string;
}

/** One row of the secured-connection settings; `masked` says how --print-config shows it. */
export interface ZkSecuritySettingSpec extends SettingSpecBase<keyof ZkSecuritySettings> {
  /** `user`: show the user and hide the password (`alice:****`); `all`: show `****`. */
  masked?: 'user' | 'all';
  /** A valid value in flag/environment form, different from the default: for docs and tests. */
  example: string;
}

/** The rows, in --help order. Every program adds them to its own table. */
export const ZK_SECURITY_SETTINGS: readonly ZkSecuritySettingSpec[] = [
  {
    key: 'zkTls',
    flag: '--zk-tls',
    env: 'ZOOTT_ZK_TLS',
    kind: 'bool',
    arg: '',
    help: "connect to ZooKeeper over TLS (the servers' secureClientPort); on by itself when a --zk-tls-* file is given",
    example: 'true',
  },
  {
    key: 'zkTlsCa',
    flag: '--zk-tls-ca',
    env: 'ZOOTT_ZK_TLS_CA',
    kind: 'string',
    arg: 'pem-file',
    help: "ZooKeeper TLS: CA certificate(s) the servers' certificates must chain to (default: Node's bundled root CAs)",
    example: '/etc/zoott/zk-ca.pem',
  },
  {
    key: 'zkTlsCert',
    flag: '--zk-tls-cert',
    env: 'ZOOTT_ZK_TLS_CERT',
    kind: 'string',
    arg: 'pem-file',
    help: "ZooKeeper TLS: client certificate, for servers that ask for one (mutual TLS; ZooKeeper's x509 ACL scheme names its subject)",
    example: '/etc/zoott/zk-client.pem',
  },
  {
    key: 'zkTlsKey',
    flag: '--zk-tls-key',
    env: 'ZOOTT_ZK_TLS_KEY',
    kind: 'string',
    arg: 'pem-file',
    help: 'ZooKeeper TLS: the private key of --zk-tls-cert (PEM, encrypted or not)',
    example: '/etc/zoott/zk-client.key',
  },
  {
    key: 'zkTlsKeyPassphrase',
    flag: '--zk-tls-key-passphrase',
    env: 'ZOOTT_ZK_TLS_KEY_PASSPHRASE',
    kind: 'string',
    arg: 'passphrase',
    help: 'passphrase of an encrypted --zk-tls-key (prefer ZOOTT_ZK_TLS_KEY_PASSPHRASE or --zk-tls-key-passphrase-file: a command line is readable by every local user)',
    masked: 'all',
    example: 'key-pass',
  },
  {
    key: 'zkTlsKeyPassphraseFile',
    flag: '--zk-tls-key-passphrase-file',
    env: 'ZOOTT_ZK_TLS_KEY_PASSPHRASE_FILE',
    kind: 'string',
    arg: 'path',
    help: 'file whose first line is the passphrase of an encrypted --zk-tls-key',
    example: '/etc/zoott/zk-key-pass',
  },
  {
    key: 'zkTlsSkipHostnameCheck',
    flag: '--zk-tls-skip-hostname-check',
    env: 'ZOOTT_ZK_TLS_SKIP_HOSTNAME_CHECK',
    kind: 'bool',
    arg: '',
    help: 'ZooKeeper TLS: accept a server certificate that does not name the host connected to (the CA is still checked; anyone holding a certificate from that CA could then pose as a server)',
    example: 'true',
  },
  {
    key: 'zkSasl',
    flag: '--zk-sasl',
    env: 'ZOOTT_ZK_SASL',
    kind: 'string',
    arg: 'user:password',
    help: "SASL DIGEST-MD5 login to ZooKeeper (a JAAS DigestLoginModule user); the session's ACL id is then sasl:<user> (prefer ZOOTT_ZK_SASL or --zk-sasl-file: a command line is readable by every local user)",
    masked: 'user',
    example: 'zoott:sasl-secret',
  },
  {
    key: 'zkSaslFile',
    flag: '--zk-sasl-file',
    env: 'ZOOTT_ZK_SASL_FILE',
    kind: 'string',
    arg: 'path',
    help: 'file whose first line is the SASL login user:password',
    example: '/etc/zoott/zk-sasl',
  },
];

/** A secured-connection setting as --print-config shows it: never a password. */
export function maskZkSecurity(key: string, value: unknown): unknown {
  const spec = ZK_SECURITY_SETTINGS.find((s) => s.key === key);
  if (!spec?.masked || typeof value !== 'string') return value;
  if (spec.masked === 'all') return '****';
  const colon = value.indexOf(':');
  return colon === -1 ? '****' : `${value.slice(0, colon)}:****`;
}

/** Where each setting came from, to name the flag, variable or file key in errors. */
export type ZkSecuritySources = Partial<Record<keyof ZkSecuritySettings, SettingSource | 'config'>>;

/** The connection options of the settings: `tls` and `sasl` for connectZk, or neither. */
export interface ZkSecurityOptions {
  tls?: ZkTlsOptions;
  sasl?: ZkSaslOptions;
}

/**
 * Reads the files the settings name and gives connectZk's `tls` and `sasl` options. A file
 * that cannot be read, a certificate without its key, a passphrase without a key, contradictory
 * switches or a malformed login are bad configuration naming the flag, variable or file key
 * they came from (`fileName: key` for a config file). Whether a certificate or key is valid
 * PEM, and whether a passphrase opens the key, connectZk checks, naming its option.
 *
 * @throws ZoottError INVALID_CONFIG
 */
export function zkSecurityOptions(
  settings: ZkSecuritySettings,
  sources: ZkSecuritySources = {},
  fileName = 'config file',
): ZkSecurityOptions {
  const where = (key: keyof ZkSecuritySettings) => {
    const spec = ZK_SECURITY_SETTINGS.find((s) => s.key === key)!;
    const from = sources[key];
    return from === 'flag' ? spec.flag : from === 'env' ? spec.env : `${fileName}: ${key}`;
  };
  const read = (
    key: 'zkTlsCa' | 'zkTlsCert' | 'zkTlsKey' | 'zkTlsKeyPassphraseFile' | 'zkSaslFile',
  ) => {
    const file = settings[key];
    if (file === undefined) return undefined;
    try {
      return readFileSync(file);
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw settingError(where(key), `cannot read ${file} (${why})`, key);
    }
  };
  const out: ZkSecurityOptions = {};
  const files = settings.zkTlsCa ?? settings.zkTlsCert ?? settings.zkTlsKey;
  if (settings.zkTls === false && files !== undefined)
    throw settingError(
      where('zkTls'),
      'is false, but TLS files are given (--zk-tls-ca, --zk-tls-cert, --zk-tls-key)',
      'zkTls',
    );
  if (settings.zkTls === true || files !== undefined) out.tls = tlsOf(settings, where, read);
  else {
    const stray = (
      ['zkTlsKeyPassphrase', 'zkTlsKeyPassphraseFile', 'zkTlsSkipHostnameCheck'] as const
    ).find((k) => settings[k] !== undefined && settings[k] !== false);
    if (stray)
      throw settingError(where(stray), 'is a TLS setting, and TLS is off (--zk-tls)', stray);
  }
  const sasl = saslOf(settings, where, read);
  if (sasl) out.sasl = sasl;
  return out;
}

type Where = (key: keyof ZkSecuritySettings) => string;
type Read = (
  key: 'zkTlsCa' | 'zkTlsCert' | 'zkTlsKey' | 'zkTlsKeyPassphraseFile' | 'zkSaslFile',
) => Buffer | undefined;

/** The first line of a secret file, without its line end. */
function firstLine(bytes: Buffer): string {
  return bytes.toString('utf8').split(/\r?\n/)[0] ?? '';
}

function tlsOf(settings: ZkSecuritySettings, where: Where, read: Read): ZkTlsOptions {
  if ((settings.zkTlsCert === undefined) !== (settings.zkTlsKey === undefined)) {
    const given = settings.zkTlsCert === undefined ? 'zkTlsKey' : 'zkTlsCert';
    throw settingError(
      where(given),
      'a client certificate and its key go together: give both --zk-tls-cert and --zk-tls-key',
      given,
    );
  }
  if (settings.zkTlsKeyPassphrase !== undefined && settings.zkTlsKeyPassphraseFile !== undefined)
    throw settingError(
      where('zkTlsKeyPassphraseFile'),
      'give the key passphrase once: by ZOOTT_ZK_TLS_KEY_PASSPHRASE (or --zk-tls-key-passphrase) or by a file, not both',
      'zkTlsKeyPassphraseFile',
    );
  const fromFile = read('zkTlsKeyPassphraseFile');
  const passphrase = fromFile !== undefined ? firstLine(fromFile) : settings.zkTlsKeyPassphrase;
  if (passphrase !== undefined && settings.zkTlsKey === undefined) {
    const key = fromFile !== undefined ? 'zkTlsKeyPassphraseFile' : 'zkTlsKeyPassphrase';
    throw settingError(where(key), 'is the passphrase of --zk-tls-key, and none is given', key);
  }
  const ca = read('zkTlsCa');
  const cert = read('zkTlsCert');
  const key = read('zkTlsKey');
  return {
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(passphrase !== undefined ? { passphrase } : {}),
    ...(settings.zkTlsSkipHostnameCheck ? { verifyHostname: false } : {}),
  };
}

function saslOf(settings: ZkSecuritySettings, where: Where, read: Read): ZkSaslOptions | null {
  if (settings.zkSasl !== undefined && settings.zkSaslFile !== undefined)
    throw settingError(
      where('zkSaslFile'),
      'give the SASL login once: by ZOOTT_ZK_SASL (or --zk-sasl) or by a file, not both',
      'zkSaslFile',
    );
  const fromFile = read('zkSaslFile');
  const login = fromFile !== undefined ? firstLine(fromFile).trim() : settings.zkSasl;
  if (login === undefined) return null;
  const colon = login.indexOf(':');
  if (colon <= 0 || colon === login.length - 1) {
    const key = fromFile !== undefined ? 'zkSaslFile' : 'zkSasl';
    throw settingError(
      where(key),
      `expected user:password${colon <= 0 ? '' : ` (got ${JSON.stringify(`${login.slice(0, colon)}:`)}, no password)`}`,
      key,
    );
  }
  return { username: login.slice(0, colon), password: login.slice(colon + 1) };
}

/** Where to look, by the option a connect error names (`field`), in the settings' words. */
const HINTS: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /^tls\.ca$/,
    "give the CA that signed the servers' certificates: --zk-tls-ca (ZOOTT_ZK_TLS_CA, zkTlsCa)",
  ],
  [
    /^tls\.verifyHostname$/,
    "connect by a host name the servers' certificates hold (--connect), or turn the check off with --zk-tls-skip-hostname-check (ZOOTT_ZK_TLS_SKIP_HOSTNAME_CHECK)",
  ],
  [
    /^tls\.(cert|key|passphrase)$/,
    "check the client certificate and key: --zk-tls-cert and --zk-tls-key (ZOOTT_ZK_TLS_CERT, ZOOTT_ZK_TLS_KEY), and an encrypted key's passphrase (ZOOTT_ZK_TLS_KEY_PASSPHRASE or --zk-tls-key-passphrase-file)",
  ],
  [
    /^tls/,
    "a secureClientPort takes TLS (--zk-tls, ZOOTT_ZK_TLS, zkTls) and a clientPort plain text: check --connect and --zk-tls against the servers' zoo.cfg",
  ],
  [
    /^sasl/,
    "check the SASL login: --zk-sasl-file or ZOOTT_ZK_SASL (user:password of a user in the servers' JAAS DigestLoginModule)",
  ],
];

/** What to change for an error of a secured connect (`err.field` of connectZk), or null. */
export function zkSecurityHint(err: { field?: string | undefined }): string | null {
  const field = err.field ?? '';
  return HINTS.find(([re]) => re.test(field))?.[1] ?? null;
}
