import { readFileSync } from 'node:fs';
import { ZoottError } from '@zoott/core';

/** One ZooKeeper credential, as the client takes it. */
export interface Credential {
  scheme: 'digest';
  auth: string;
}

/** `user:password` or `digest:user:password`; the error never shows the password. */
export function parseCredential(spec: string, where: string): Credential {
  const rest = spec.startsWith('digest:') && spec.indexOf(':', 7) > 7 ? spec.slice(7) : spec;
  const colon = rest.indexOf(':');
  if (colon <= 0 || colon === rest.length - 1)
    throw new ZoottError(
      'INVALID_CONFIG',
      `${where}: expected user:password or digest:user:password`,
      { field: 'auth' },
    );
  return { scheme: 'digest', auth: rest };
}

/** The credentials of `auth` entries and of an auth file (one a line, `#` comments). */
export function credentialsOf(auth: readonly string[] | undefined, authFile: string | undefined) {
  const out = (auth ?? []).map((a, i) => parseCredential(a, `auth[${i}]`));
  if (authFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(authFile, 'utf8');
    } catch (err) {
      throw new ZoottError(
        'INVALID_CONFIG',
        `cannot read the auth file ${authFile} (${(err as Error).message})`,
        { field: 'authFile' },
      );
    }
    text.split(/\r?\n/).forEach((raw, i) => {
      const line = raw.trim();
      if (line !== '' && !line.startsWith('#'))
        out.push(parseCredential(line, `auth file ${authFile} line ${i + 1}`));
    });
  }
  return out;
}
