import { X509Certificate } from 'node:crypto';
import type { Acl } from '@zoott/core';
import {
  mergeSettingSources,
  parseAclEntry,
  rejoinAclEntries,
  ZK_SECURITY_SETTINGS,
  type ZkSecurityOptions,
  type ZkSecuritySettings,
  zkSecurityOptions,
} from '@zoott/jobs/config';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';

// The CLI's side of the settings every zoott program shares for a secured ZooKeeper (TLS,
// SASL) and of `--acl`: the global flags, their environment variables and config-file keys,
// read through the same table and reader as zoott-worker's.

/** The secured-connection settings as the CLI resolved them. */
export interface CliZkSecurity {
  /** The values flags, environment and config file set (for the demo's worker processes). */
  values: ZkSecuritySettings;
  /** connectZk's `tls` and `sasl`, files read. */
  options: ZkSecurityOptions;
}

/**
 * Merges the secured-connection flags, environment and config file, and reads the files they
 * name. Errors name the flag, variable or config key (exit 2).
 */
export function resolveZkSecurity(
  flags: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  config: Record<string, unknown>,
  configPath: string | null,
): CliZkSecurity {
  const fileName = configPath ?? 'config file';
  const file = Object.fromEntries(
    ZK_SECURITY_SETTINGS.filter((s) => config[s.key] !== undefined).map((spec) => [
      spec.key,
      config[spec.key],
    ]),
  );
  const picked = Object.fromEntries(
    ZK_SECURITY_SETTINGS.filter((s) => flags[s.key] !== undefined).map((spec) => [
      spec.key,
      flags[spec.key],
    ]),
  );
  try {
    const merged = mergeSettingSources(ZK_SECURITY_SETTINGS, {
      flags: picked,
      env,
      file,
      fileName,
    });
    // Typed by the table's kinds: the reader checked each value.
    const values = merged.values as ZkSecuritySettings;
    return { values, options: zkSecurityOptions(values, merged.sources, fileName) };
  } catch (err) {
    throw new CliError(
      (err as Error).message.replace(/^INVALID_CONFIG: /, ''),
      ExitCode.USAGE,
      'the ZooKeeper TLS and SASL settings are in `zoott --help` (--zk-tls, --zk-tls-ca, --zk-tls-cert, --zk-tls-key, --zk-sasl-file, ...)',
    );
  }
}

/** The environment that hands these settings to a child zoott program (the demo's workers). */
export function zkSecurityEnv(values: ZkSecuritySettings): Record<string, string> {
  const out: Record<string, string> = {};
  for (const spec of ZK_SECURITY_SETTINGS) {
    const value = values[spec.key];
    if (value !== undefined) out[spec.env] = String(value);
  }
  return out;
}

/**
 * The `--acl` entries (flag, else `ZOOTT_ACL`, else the config file's `acl`), parsed; null when
 * none is given, `'open'` for the one entry `open`.
 */
export function resolveAcl(
  flag: string[] | undefined,
  env: NodeJS.ProcessEnv,
  config: unknown,
): Acl[] | 'open' | null {
  const fromEnv = env.ZOOTT_ACL ? env.ZOOTT_ACL.split(',') : undefined;
  const fromFile = Array.isArray(config)
    ? (config as unknown[])
    : typeof config === 'string'
      ? config.split(',')
      : undefined;
  const [entries, where] = flag
    ? [flag, '--acl']
    : fromEnv
      ? [fromEnv, 'ZOOTT_ACL']
      : fromFile
        ? [fromFile, 'acl in the config file']
        : [undefined, ''];
  if (!entries) return null;
  // A variable is cut at commas, and x509 subjects hold some.
  const list = rejoinAclEntries(entries.map((e) => String(e).trim()).filter((e) => e !== ''));
  if (list.length === 1 && list[0] === 'open') return 'open';
  try {
    return list.map((entry, i) => parseAclEntry(entry, `${where}[${i}]`));
  } catch (err) {
    throw new CliError(
      (err as Error).message.replace(/^INVALID_CONFIG: /, ''),
      ExitCode.USAGE,
      'e.g. --acl x509:CN=alice,O=example:cdrwa --acl sasl:ops:r',
    );
  }
}

/**
 * Who the session is to ZooKeeper, for messages: its digest users, its SASL user, the subject
 * of its client certificate (as the x509 scheme names it, for certificates with plain names).
 */
export function describeIdentities(auth: readonly string[], security: CliZkSecurity): string[] {
  const out = auth.map((a) => `digest:${a.slice(0, a.indexOf(':'))}`);
  if (security.options.sasl) out.push(`sasl:${security.options.sasl.username}`);
  const cert = security.options.tls?.cert;
  if (cert) {
    try {
      const subject = new X509Certificate(cert as Buffer).subject;
      out.push(`x509:${subject.split('\n').reverse().join(',')} (--zk-tls-cert)`);
    } catch {
      out.push('x509 (the client certificate of --zk-tls-cert)');
    }
  }
  return out;
}
