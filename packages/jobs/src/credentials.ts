import { ZoottError } from '@zoott/core';
import { readTrusted } from './file-trust.js';

// ZooKeeper credentials as every zoott program takes them: `auth` entries (flag, environment
// or config file) and an auth file, one credential a line. Errors never show a password.

/** One credential, as the ZooKeeper client takes it. */
export interface Credential {
  scheme: 'digest';
  /** `user:password` */
  auth: string;
}

/** How one program reports bad credentials, where programs differ. */
export interface CredentialRules {
  /** Whether a malformed credential is quoted (masked) in the error. */
  quoteRejected: boolean;
  /** What explains an unreadable auth file: the errno code (`ENOENT`) or the whole OS message. */
  readError: 'code' | 'message';
  /** Whether an auth file with no credential is refused (else it adds none). */
  refuseEmptyFile: boolean;
}

/** The rules of zoott-worker and the CLI: the defaults. */
export const WORKER_CREDENTIAL_RULES: CredentialRules = {
  quoteRejected: true,
  readError: 'code',
  refuseEmptyFile: true,
};

function bad(message: string, field: string): ZoottError {
  return new ZoottError('INVALID_CONFIG', message, { field });
}

/**
 * Parses one credential: `user:password`, or the same with the scheme spelt out,
 * `digest:user:password`. The password may contain colons; the user may not. A user named
 * `digest` is written with the scheme (`digest:digest:password`).
 *
 * @throws ZoottError INVALID_CONFIG that never contains the password.
 */
export function parseCredential(
  spec: string,
  where: string,
  rules: CredentialRules = WORKER_CREDENTIAL_RULES,
): Credential {
  const rest = spec.startsWith('digest:') && spec.indexOf(':', 7) > 7 ? spec.slice(7) : spec;
  const colon = rest.indexOf(':');
  if (colon <= 0 || colon === rest.length - 1)
    throw bad(
      `${where}: expected user:password or digest:user:password${
        rules.quoteRejected ? ` (got ${JSON.stringify(maskCredential(spec))})` : ''
      }`,
      'auth',
    );
  return { scheme: 'digest', auth: rest };
}

/** A credential for display: the user, never the password (`alice:****`). */
export function maskCredential(spec: string): string {
  const lead = spec.startsWith('digest:') ? 'digest:' : '';
  const rest = spec.slice(lead.length);
  const colon = rest.indexOf(':');
  if (colon === -1) return lead + (rest === '' ? '' : '****');
  return `${lead}${rest.slice(0, colon)}:****`;
}

/**
 * Reads credentials from a file: one per line, `user:password` or `digest:user:password`;
 * blank lines and lines starting with `#` are skipped. Keeps passwords off command lines,
 * where any local user can read them in /proc/<pid>/cmdline. Refused unless owned by the user
 * running the program or root and private to it (mode 600 or stricter), as ssh does its keys.
 */
export function readAuthFile(
  path: string,
  rules: CredentialRules = WORKER_CREDENTIAL_RULES,
): Credential[] {
  let text: string;
  try {
    // Owned by the user running the program (or root), and nobody else's to read or write.
    text = readTrusted(path, { kind: 'auth file', field: 'authFile', private: true }).text;
  } catch (err) {
    if (err instanceof ZoottError) throw err;
    const code = rules.readError === 'code' ? (err as NodeJS.ErrnoException).code : undefined;
    throw bad(`cannot read the auth file ${path} (${code ?? (err as Error).message})`, 'authFile');
  }
  const out: Credential[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    out.push(parseCredential(line, `auth file ${path} line ${index + 1}`, rules));
  });
  if (out.length === 0 && rules.refuseEmptyFile)
    throw bad(`auth file ${path} holds no credential`, 'authFile');
  return out;
}

/** The credentials of the settings: the `auth` entries, then the lines of the auth file. */
export function credentialsOf(
  settings: { auth?: readonly string[] | undefined; authFile?: string | undefined },
  rules: CredentialRules = WORKER_CREDENTIAL_RULES,
): Credential[] {
  return [
    ...(settings.auth ?? []).map((a, i) => parseCredential(a, `auth[${i}]`, rules)),
    ...(settings.authFile !== undefined ? readAuthFile(settings.authFile, rules) : []),
  ];
}
