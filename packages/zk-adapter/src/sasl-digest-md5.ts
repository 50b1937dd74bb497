import { createHash, randomBytes } from 'node:crypto';

/**
 * The client side of SASL DIGEST-MD5 (RFC 2831) as ZooKeeper's server runs it (the JDK's
 * DigestMD5Server behind a JAAS `DigestLoginModule`): protocol `zookeeper`, server name
 * `zk-sasl-md5`, quality of protection `auth` (authentication only; the connection itself is
 * not wrapped). Pure functions: the exchange over the wire is sasl-handshake.ts.
 */

/** The digest-uri ZooKeeper's server expects: `<protocol>/<server name>`. */
export const ZOOKEEPER_DIGEST_URI = 'zookeeper/zk-sasl-md5';

/** What the client needs from the server's challenge. */
export interface DigestChallenge {
  realm: string;
  nonce: string;
  /** The challenge said `charset=utf-8`: names and password are then UTF-8 where they must be. */
  utf8: boolean;
}

/** The client's answer, and what the server must answer it with to prove it knows the password. */
export interface DigestAnswer {
  response: string;
  rspauth: string;
}

/** Thrown for a challenge this client cannot answer; the message says what is wrong with it. */
export class DigestChallengeError extends Error {
  override readonly name = 'DigestChallengeError';
}

/**
 * The directives of a challenge: `name=value` or `name="quoted \" value"`, comma separated.
 * A directive that appears twice keeps every value (RFC 2831 allows several realms).
 */
export function parseDirectives(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const re = /\s*([A-Za-z0-9-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,]*))\s*(?:,|$)/gy;
  let match: RegExpExecArray | null = re.exec(text);
  while (match !== null && match[0] !== '') {
    const name = (match[1] as string).toLowerCase();
    const value =
      match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : (match[3] ?? '').trim();
    out.set(name, [...(out.get(name) ?? []), value]);
    if (re.lastIndex >= text.length) break;
    match = re.exec(text);
  }
  return out;
}

/** Reads the server's challenge; refuses one without a nonce, without `auth`, or not md5-sess. */
export function readChallenge(text: string): DigestChallenge {
  const directives = parseDirectives(text);
  const one = (name: string) => directives.get(name)?.[0];
  const nonce = one('nonce');
  if (!nonce)
    throw new DigestChallengeError(`the server's DIGEST-MD5 challenge has no nonce: ${text}`);
  const qop = (one('qop') ?? 'auth').split(',').map((q) => q.trim());
  if (!qop.includes('auth'))
    throw new DigestChallengeError(
      `the server's DIGEST-MD5 challenge offers qop ${qop.join(',')}, not auth`,
    );
  const algorithm = one('algorithm');
  if (algorithm !== 'md5-sess')
    throw new DigestChallengeError(
      `the server's DIGEST-MD5 challenge names algorithm ${JSON.stringify(algorithm)}, not md5-sess`,
    );
  return { realm: one('realm') ?? '', nonce, utf8: one('charset')?.toLowerCase() === 'utf-8' };
}

/**
 * A string's bytes as the JDK's DIGEST-MD5 hashes them: ISO 8859-1 when every character fits
 * (always so without `charset=utf-8`), else UTF-8. The server computes its side the same way,
 * so the two must agree byte for byte.
 */
function digestBytes(text: string, utf8: boolean): Buffer {
  if (utf8 && [...text].some((c) => (c.codePointAt(0) as number) > 0xff))
    return Buffer.from(text, 'utf8');
  return Buffer.from(text, 'latin1');
}

const md5 = (...parts: Array<string | Buffer>) => {
  const hash = createHash('md5');
  for (const part of parts) hash.update(part);
  return hash.digest();
};
const hex = (b: Buffer) => b.toString('hex');
const quote = (s: string) => `"${s.replace(/(["\\])/g, '\\$1')}"`;

/**
 * The response to `challenge` for `username`/`password` (RFC 2831 section 2.1.2, qop=auth, no
 * authorization id: the session's id is the user itself), with the rspauth the server's final
 * message must carry. `cnonce` is random and `digestUri` ZooKeeper's unless given (for tests).
 */
export function answerChallenge(
  challenge: DigestChallenge,
  username: string,
  password: string,
  cnonce: string = randomBytes(24).toString('base64'),
  digestUri: string = ZOOKEEPER_DIGEST_URI,
): DigestAnswer & { message: string } {
  const nc = '00000001';
  const qop = 'auth';
  const bytes = (s: string) => digestBytes(s, challenge.utf8);
  const secret = md5(bytes(username), ':', bytes(challenge.realm), ':', bytes(password));
  const ha1 = hex(md5(secret, `:${challenge.nonce}:${cnonce}`));
  const kd = (a2: string) =>
    hex(md5(`${ha1}:${challenge.nonce}:${nc}:${cnonce}:${qop}:${hex(md5(a2))}`));
  const response = kd(`AUTHENTICATE:${digestUri}`);
  const message = [
    ...(challenge.utf8 ? ['charset=utf-8'] : []),
    `username=${quote(username)}`,
    `realm=${quote(challenge.realm)}`,
    `nonce=${quote(challenge.nonce)}`,
    `nc=${nc}`,
    `cnonce=${quote(cnonce)}`,
    `digest-uri=${quote(digestUri)}`,
    'maxbuf=65536',
    `response=${response}`,
    `qop=${qop}`,
  ].join(',');
  return { message, response, rspauth: kd(`:${digestUri}`) };
}

/** Whether the server's final message proves it knew the password. */
export function checkRspauth(text: string, expected: string): boolean {
  return parseDirectives(text).get('rspauth')?.[0] === expected;
}
