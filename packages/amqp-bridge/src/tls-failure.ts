/**
 * Which side refused the TLS handshake: this client the broker's certificate
 * (`untrusted-broker`), the broker this client's certificate or its lack of one
 * (`refused-client`), or the handshake failed otherwise (`handshake`: no common version or
 * cipher, an unreadable certificate or key, ...).
 */
export type TlsFailureKind = 'untrusted-broker' | 'refused-client' | 'handshake';

/**
 * The first connection to RabbitMQ failed its TLS handshake. Retrying cannot help (the
 * certificates are what they are), so a starting bridge fails with this instead of retrying:
 * `startAmqpBridge` rejects with it.
 */
export class AmqpTlsError extends Error {
  readonly code = 'AMQP_TLS';

  constructor(
    readonly kind: TlsFailureKind,
    message: string,
    options: { cause: unknown },
  ) {
    super(message, options);
    this.name = 'AmqpTlsError';
  }
}

/**
 * What Node's TLS reports when the broker's certificate does not check out: OpenSSL's
 * verification results (by Node's names for them) and a name that does not match the host.
 */
const UNTRUSTED_BROKER = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** TLS alerts a broker sends when it will not take this client's certificate (or its lack). */
const REFUSED_CLIENT = new Set([
  'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
  'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
  'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN',
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED',
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_REVOKED',
  'ERR_SSL_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE',
]);

const EXPLAINED: Record<TlsFailureKind, string> = {
  'untrusted-broker':
    "the broker's certificate is not trusted (is it signed by the CA given as ca?)",
  'refused-client':
    'the broker refused this client: it requires a client certificate (cert and key) signed by a CA it trusts',
  handshake:
    'the TLS handshake failed (a client certificate the broker requires may be missing, or there is no common TLS version or cipher)',
};

/**
 * The error as an {@link AmqpTlsError} when it is a TLS failure (see {@link TlsFailureKind}),
 * else `null` (the broker is down, refused the login, ...: worth retrying or reported as is).
 * `shownUrl`: the broker's URL with its password masked.
 */
export function tlsFailure(err: unknown, shownUrl: string): AmqpTlsError | null {
  if (!(err instanceof Error)) return null;
  const { code, library } = err as Error & { code?: unknown; library?: unknown };
  if (typeof code !== 'string') return null;
  const kind: TlsFailureKind | null = UNTRUSTED_BROKER.has(code)
    ? 'untrusted-broker'
    : REFUSED_CLIENT.has(code)
      ? 'refused-client'
      : code.startsWith('ERR_SSL_') || code.startsWith('ERR_OSSL_') || library === 'SSL routines'
        ? 'handshake'
        : null;
  if (!kind) return null;
  // OpenSSL's messages carry its internal error stack: the reason alone is the readable part.
  const reason = (err as { reason?: unknown }).reason;
  const said = typeof reason === 'string' ? reason : err.message;
  return new AmqpTlsError(
    kind,
    `TLS with RabbitMQ at ${shownUrl} failed: ${said} (${code}): ${EXPLAINED[kind]}`,
    { cause: err },
  );
}
