import { X509Certificate } from 'node:crypto';
import { createSecureContext, type SecureContext } from 'node:tls';
import { ZoottError } from '@zoott/core';

/**
 * TLS to a ZooKeeper `secureClientPort`. The server's certificate is checked against `ca`
 * (Node's bundled root CAs without it) and, unless `verifyHostname` is false, against the
 * host of the connect string. TLS 1.2 is the oldest version accepted.
 */
export interface ZkTlsOptions {
  /** CA certificates (PEM; one bundle or several) the server's certificate must chain to. */
  ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  /** Client certificate (PEM, with its chain), for servers that ask for one: mutual TLS, `x509` ACLs. */
  cert?: string | Buffer;
  /** The client certificate's private key (PEM), encrypted or not. */
  key?: string | Buffer;
  /** Passphrase of an encrypted `key`. */
  passphrase?: string;
  /** Check that the server's certificate names the host connected to (default true). */
  verifyHostname?: boolean;
}

/**
 * SASL authentication, done on every connection right after the session handshake and
 * before any other request: DIGEST-MD5 (RFC 2831), the mechanism of ZooKeeper's JAAS
 * `DigestLoginModule`. The session's id in ACLs is then `sasl:<username>`.
 */
export interface ZkSaslOptions {
  /** Only DIGEST-MD5 (the default) is supported; Kerberos (GSSAPI) is not. */
  mechanism?: 'DIGEST-MD5';
  username: string;
  password: string;
}

/** TLS as a connection uses it: the context built (and checked) once. */
export interface ResolvedTls {
  context: SecureContext;
  verifyHostname: boolean;
}

export interface ResolvedSasl {
  mechanism: 'DIGEST-MD5';
  username: string;
  password: string;
}

const bad = (field: string, why: string) =>
  new ZoottError('INVALID_CONFIG', `${field}: ${why}`, { field });

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** The certificates of a PEM bundle; INVALID_CONFIG when it holds none or one is not readable. */
function pemCertificates(field: string, pem: string | Buffer): string[] {
  const text = typeof pem === 'string' ? pem : pem.toString('utf8');
  const certs = text.match(PEM_CERT) ?? [];
  if (certs.length === 0)
    throw bad(field, 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  for (const cert of certs) {
    try {
      new X509Certificate(cert);
    } catch (err) {
      throw bad(field, `a certificate in it cannot be read (${(err as Error).message})`);
    }
  }
  return certs;
}

/** Why Node refused the client certificate and key, in words. */
function keyProblem(err: NodeJS.ErrnoException, passphrase: boolean): ZoottError {
  switch (err.code) {
    case 'ERR_OSSL_BAD_DECRYPT':
      return bad(
        'tls.key',
        passphrase
          ? 'the passphrase does not decrypt the key'
          : 'the key is encrypted and no passphrase was given',
      );
    case 'ERR_OSSL_X509_KEY_VALUES_MISMATCH':
      return bad('tls.key', 'the key does not belong to the certificate tls.cert');
    case 'ERR_OSSL_PEM_NO_START_LINE':
      return bad('tls.cert', 'not a PEM certificate');
    default:
      return bad('tls.key', `not a usable PEM private key (${err.message})`);
  }
}

/** Checks the TLS options and builds their context; throws INVALID_CONFIG naming the field. */
export function resolveTls(tls: ZkTlsOptions | boolean | undefined): ResolvedTls | null {
  if (tls === undefined || tls === false) return null;
  const tlsOptions: ZkTlsOptions = tls === true ? {} : tls;
  if (typeof tlsOptions !== 'object' || tlsOptions === null)
    throw bad('tls', 'must be true or an object');
  if ((tlsOptions.cert === undefined) !== (tlsOptions.key === undefined))
    throw bad(
      tlsOptions.cert === undefined ? 'tls.key' : 'tls.cert',
      'a client certificate and its key go together: give both tls.cert and tls.key',
    );
  if (tlsOptions.passphrase !== undefined && tlsOptions.key === undefined)
    throw bad('tls.passphrase', 'is for an encrypted tls.key, and there is none');
  if (tlsOptions.verifyHostname !== undefined && typeof tlsOptions.verifyHostname !== 'boolean')
    throw bad('tls.verifyHostname', 'must be true or false');
  const ca =
    tlsOptions.ca === undefined
      ? undefined
      : (Array.isArray(tlsOptions.ca) ? tlsOptions.ca : [tlsOptions.ca]).flatMap(
          (pem: string | Buffer) => pemCertificates('tls.ca', pem),
        );
  if (tlsOptions.cert !== undefined) pemCertificates('tls.cert', tlsOptions.cert);
  let context: SecureContext;
  try {
    context = createSecureContext({
      minVersion: 'TLSv1.2',
      ...(ca ? { ca } : {}),
      ...(tlsOptions.cert !== undefined ? { cert: tlsOptions.cert } : {}),
      ...(tlsOptions.key !== undefined ? { key: tlsOptions.key } : {}),
      ...(tlsOptions.passphrase !== undefined ? { passphrase: tlsOptions.passphrase } : {}),
    });
  } catch (err) {
    throw keyProblem(err as NodeJS.ErrnoException, tlsOptions.passphrase !== undefined);
  }
  return { context, verifyHostname: tlsOptions.verifyHostname ?? true };
}

/** Checks the SASL options; throws INVALID_CONFIG naming the field. */
export function resolveSasl(sasl: ZkSaslOptions | undefined): ResolvedSasl | null {
  if (sasl === undefined) return null;
  if (typeof sasl !== 'object' || sasl === null)
    throw bad('sasl', 'must be an object { username, password }');
  const mechanism = sasl.mechanism ?? 'DIGEST-MD5';
  if (mechanism !== 'DIGEST-MD5')
    throw bad(
      'sasl.mechanism',
      `only DIGEST-MD5 is supported, got ${JSON.stringify(mechanism)} (Kerberos/GSSAPI is not)`,
    );
  if (typeof sasl.username !== 'string' || sasl.username === '')
    throw bad('sasl.username', 'must be a non-empty string');
  if (typeof sasl.password !== 'string') throw bad('sasl.password', 'must be a string');
  return { mechanism, username: sasl.username, password: sasl.password };
}
