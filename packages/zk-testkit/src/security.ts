import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestServerCertificate, ZkTestCertificates } from './certs.js';

/**
 * How a secured test server takes clients: TLS on a `secureClientPort` (ZooKeeper's Netty
 * connection factory), optionally client certificates mapped to `x509` ids, and SASL
 * DIGEST-MD5 users from a JAAS file. A secured server keeps its plain `clientPort` too: the
 * testkit's readiness checks (`ruok`, `srvr`) use it, and tests use it as "the wrong port".
 */
export interface ZooKeeperSecurity {
  tls?: ZooKeeperTls;
  sasl?: ZooKeeperSasl;
}

/** TLS of the secure client port: the stores the server loads and what it asks of clients. */
export interface ZooKeeperTls {
  /** PKCS12 key store with the server's certificate and key. */
  keyStore: string;
  /** PKCS12 trust store of the CAs client certificates must come from. */
  trustStore: string;
  /** Password of both stores. */
  storePassword: string;
  /** Whether a client must (`need`), may (`want`) or cannot (`none`) present a certificate. Default `want`. */
  clientAuth?: 'need' | 'want' | 'none';
  /** Register ZooKeeper's X509AuthenticationProvider: a client certificate becomes an `x509` id. Default true. */
  x509?: boolean;
}

/** SASL DIGEST-MD5 as Kafka documents it: a JAAS `Server` section of `DigestLoginModule` users. */
export interface ZooKeeperSasl {
  /** User name → password. */
  users: Readonly<Record<string, string>>;
  /**
   * Refuse every request of a session that has not authenticated with SASL
   * (`enforce.auth.enabled`, ZooKeeper 3.7+): a client that sends anything before its SASL
   * exchange is done is disconnected.
   */
  enforce?: boolean;
}

/** The TLS settings of a server presenting `which` of the test certificates. */
export function serverTls(
  certs: ZkTestCertificates,
  options: {
    which?: 'server' | 'expiredServer' | 'wrongHostServer';
    clientAuth?: ZooKeeperTls['clientAuth'];
    x509?: boolean;
  } = {},
): ZooKeeperTls {
  const server: TestServerCertificate = certs[options.which ?? 'server'];
  return {
    keyStore: server.keyStore,
    trustStore: certs.trustStore,
    storePassword: certs.storePassword,
    ...(options.clientAuth ? { clientAuth: options.clientAuth } : {}),
    ...(options.x509 !== undefined ? { x509: options.x509 } : {}),
  };
}

/** zoo.cfg lines for `security`, the secure port being `secureClientPort`. */
export function securityConfigLines(
  security: ZooKeeperSecurity,
  secureClientPort: number | undefined,
): string[] {
  const lines: string[] = [];
  const { tls, sasl } = security;
  if (tls) {
    if (secureClientPort === undefined) throw new Error('a TLS server needs a secure client port');
    lines.push(
      'serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory',
      `secureClientPort=${secureClientPort}`,
      'secureClientPortAddress=127.0.0.1',
      `ssl.keyStore.location=${tls.keyStore}`,
      `ssl.keyStore.password=${tls.storePassword}`,
      'ssl.keyStore.type=PKCS12',
      `ssl.trustStore.location=${tls.trustStore}`,
      `ssl.trustStore.password=${tls.storePassword}`,
      'ssl.trustStore.type=PKCS12',
      `ssl.clientAuth=${tls.clientAuth ?? 'want'}`,
    );
    if (tls.x509 ?? true)
      lines.push('authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider');
  }
  if (sasl) {
    lines.push('authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider');
    if (sasl.enforce) lines.push('enforce.auth.enabled=true', 'enforce.auth.schemes=sasl');
  }
  return lines;
}

/** JVM flags for `security`: the JAAS file of SASL users, written into `dir`. */
export function securityJvmFlags(security: ZooKeeperSecurity | undefined, dir: string): string[] {
  if (!security?.sasl) return [];
  const file = path.join(dir, 'jaas.conf');
  const users = Object.entries(security.sasl.users).map(
    ([user, password]) => `  user_${user}=${JSON.stringify(password)}`,
  );
  writeFileSync(
    file,
    `Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n${users.join('\n')};\n};\n`,
  );
  return [`-Djava.security.auth.login.config=${file}`];
}
