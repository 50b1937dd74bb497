import { type ErrorCode, ZoottError } from '@zoott/core';

/**
 * Why a connection to one server can never work as configured: a certificate the client will
 * not accept, the wrong kind of port, credentials the server refuses. Unlike silence or a
 * refused TCP connection (a server restarting), retrying does not help, so a connect whose
 * every server gave one fails at once, saying which.
 */
export type VerdictKind =
  | 'untrusted-certificate'
  | 'expired-certificate'
  | 'wrong-host'
  | 'client-certificate-refused'
  | 'tls-version'
  | 'tls-to-plain-port'
  | 'plain-to-tls-port'
  | 'sasl-refused';

export interface ConnectVerdict {
  kind: VerdictKind;
  /** What happened, without the server's address (the caller prefixes it). */
  text: string;
}

/** The error code and the option to look at, per kind: a refused login is AUTH_FAILED. */
const KIND_INFO: Record<VerdictKind, { code: ErrorCode; field: string }> = {
  'untrusted-certificate': { code: 'CONNECTION_LOSS', field: 'tls.ca' },
  'expired-certificate': { code: 'CONNECTION_LOSS', field: 'tls' },
  'wrong-host': { code: 'CONNECTION_LOSS', field: 'tls.verifyHostname' },
  'client-certificate-refused': { code: 'CONNECTION_LOSS', field: 'tls.cert' },
  'tls-version': { code: 'CONNECTION_LOSS', field: 'tls' },
  'tls-to-plain-port': { code: 'CONNECTION_LOSS', field: 'tls' },
  'plain-to-tls-port': { code: 'CONNECTION_LOSS', field: 'tls' },
  'sasl-refused': { code: 'AUTH_FAILED', field: 'sasl' },
};

const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
]);
const EXPIRED = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
/** Alerts a server sends when it wants a client certificate it did not get, or does not trust. */
const CLIENT_REFUSED = new Set([
  'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
  'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
  'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
  'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN',
  'ERR_SSL_TLSV1_ALERT_ACCESS_DENIED',
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED',
]);
const VERSION = new Set([
  'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
  'ERR_SSL_UNSUPPORTED_PROTOCOL',
  'ERR_SSL_NO_PROTOCOLS_AVAILABLE',
  'ERR_SSL_LEGACY_SIGALG_DISALLOWED_OR_UNSUPPORTED',
]);

/**
 * The verdict of a TLS socket error, or `null` when the error says nothing certain (a reset,
 * a timeout: the caller may probe further).
 */
export function tlsErrorVerdict(err: NodeJS.ErrnoException): ConnectVerdict | null {
  const code = err.code ?? '';
  if (UNTRUSTED.has(code))
    return {
      kind: 'untrusted-certificate',
      text: `the server's certificate is not signed by a trusted CA (${code}: ${err.message}); tls.ca must hold the CA that signed it`,
    };
  if (EXPIRED.has(code))
    return {
      kind: 'expired-certificate',
      text: `the server's certificate ${code === 'CERT_HAS_EXPIRED' ? 'has expired' : 'is not valid yet'} (${code}); the server needs a current one`,
    };
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const { host, cert } = err as { host?: string; cert?: { subjectaltname?: string } };
    const names = cert?.subjectaltname ? `it names ${cert.subjectaltname}` : 'it names no host';
    return {
      kind: 'wrong-host',
      text: `the server's certificate is not for ${host ?? 'this host'} (${names}); connect by a name the certificate holds (hostname verification can be turned off, at a cost: anyone with a certificate from the CA could pose as the server)`,
    };
  }
  if (CLIENT_REFUSED.has(code))
    return {
      kind: 'client-certificate-refused',
      text: `the server ended the TLS handshake (${code}): it wants a client certificate it trusts (tls.cert and tls.key), and none or another was presented`,
    };
  if (VERSION.has(code))
    return {
      kind: 'tls-version',
      text: `the server and this client share no TLS version (${code}); this client accepts TLS 1.2 and newer`,
    };
  return null;
}

/**
 * The verdicts of one connect attempt, per server of the connect string. The attempt is
 * hopeless once every server has one (a refused login: once any has, since every server of
 * an ensemble checks the same users).
 */
export class ConnectVerdicts {
  private readonly byHost = new Map<string, ConnectVerdict>();

  constructor(
    private readonly hosts: ReadonlyArray<{ host: string; port: number }>,
    private readonly onChange: () => void,
  ) {}

  record(server: { host: string; port: number }, verdict: ConnectVerdict): void {
    this.byHost.set(`${server.host}:${server.port}`, verdict);
    this.onChange();
  }

  /** The verdicts that end the attempt, or null while some server may still answer. */
  conclusive(): Array<{ at: string; verdict: ConnectVerdict }> | null {
    const all = [...this.byHost].map(([at, verdict]) => ({ at, verdict }));
    const refused = all.filter((v) => v.verdict.kind === 'sasl-refused');
    if (refused.length > 0) return refused;
    const every = this.hosts.every((h) => this.byHost.has(`${h.host}:${h.port}`));
    return every && all.length > 0 ? all : null;
  }
}

/**
 * The error of a connect that the verdicts ended: AUTH_FAILED for a refused login, else
 * CONNECTION_LOSS (the server is unusable as configured), naming each server and why, and in
 * `field` the option to look at.
 */
export function verdictsError(
  connectString: string,
  verdicts: ReadonlyArray<{ at: string; verdict: ConnectVerdict }>,
): ZoottError {
  const kinds = new Set(verdicts.map((v) => v.verdict.kind));
  const first = verdicts[0]!.verdict.kind;
  const { code, field } = KIND_INFO[first];
  const texts = new Set(verdicts.map((v) => v.verdict.text));
  const why =
    verdicts.length === 1
      ? `${verdicts[0]!.verdict.text}${connectString.startsWith(`${verdicts[0]!.at}`) ? '' : ` (${verdicts[0]!.at})`}`
      : texts.size === 1
        ? `every server (${verdicts.map((v) => v.at).join(', ')}): ${verdicts[0]!.verdict.text}`
        : verdicts.map((v) => `${v.at}: ${v.verdict.text}`).join('; ');
  return new ZoottError(code, `could not connect to ${connectString}: ${why}`, {
    op: 'connect',
    field: kinds.size === 1 ? field : field.split('.')[0]!,
  });
}
