import { describe, expect, it } from 'vitest';
import { AmqpTlsError, tlsFailure } from '../src/index.js';

/** An error shaped as Node's TLS reports it: a code, and OpenSSL's library and reason. */
function nodeError(code: string, message: string, extra: Record<string, string> = {}): Error {
  return Object.assign(new Error(message), { code, ...extra });
}

const URL = 'amqps://bridge:****@mq1:5671/prod';

describe('tlsFailure: which connection errors are TLS failures, and of which side', () => {
  it('a broker certificate that does not check out is untrusted-broker, its reason and code named', () => {
    const err = tlsFailure(
      nodeError('UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'unable to get local issuer certificate'),
      URL,
    );
    expect(err).toBeInstanceOf(AmqpTlsError);
    expect(err?.kind).toBe('untrusted-broker');
    expect(err?.code).toBe('AMQP_TLS');
    expect(err?.message).toBe(
      "TLS with RabbitMQ at amqps://bridge:****@mq1:5671/prod failed: unable to get local issuer certificate (UNABLE_TO_GET_ISSUER_CERT_LOCALLY): the broker's certificate is not trusted (is it signed by the CA given as ca?)",
    );
    expect(tlsFailure(nodeError('ERR_TLS_CERT_ALTNAME_INVALID', 'no match'), URL)?.kind).toBe(
      'untrusted-broker',
    );
  });

  it("the broker's alerts about the client certificate are refused-client; OpenSSL's reason, not its error stack", () => {
    const err = tlsFailure(
      nodeError('ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', '80DB:error:0A000418:SSL routines:...', {
        library: 'SSL routines',
        reason: 'tlsv1 alert unknown ca',
      }),
      URL,
    );
    expect(err?.kind).toBe('refused-client');
    expect(err?.message).toMatch(
      /failed: tlsv1 alert unknown ca \(ERR_SSL_TLSV1_ALERT_UNKNOWN_CA\)/,
    );
    expect(err?.message).not.toMatch(/0A000418/);
  });

  it('other TLS and OpenSSL errors are handshake failures', () => {
    for (const code of ['ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE', 'ERR_OSSL_PEM_NO_START_LINE'])
      expect(tlsFailure(nodeError(code, 'x'), URL)?.kind).toBe('handshake');
  });

  it('a broker that is down, or anything else, is no TLS failure (the bridge retries it)', () => {
    expect(tlsFailure(nodeError('ECONNREFUSED', 'connect ECONNREFUSED'), URL)).toBeNull();
    expect(tlsFailure(nodeError('ECONNRESET', 'read ECONNRESET'), URL)).toBeNull();
    expect(
      tlsFailure(new Error('Handshake terminated by server: 403 (ACCESS-REFUSED)'), URL),
    ).toBeNull();
    expect(tlsFailure('a string', URL)).toBeNull();
  });
});
