#!/usr/bin/env node
// Makes sure the tests can run for real before they start: a ZooKeeper server (the adapter,
// engine, worker and CLI tests use a real one), a RabbitMQ broker (the AMQP bridge's tests,
// through @zoott/rabbitmq-testkit), the openssl binary (that kit makes the certificates of a
// broker with TLS with it, and zk-testkit those of a ZooKeeper with TLS, with keytool for its
// trust store), a Chromium (the dashboard's browser tests), and the `ip` command of iproute2
// with root (the partition tests cut hosts apart with network namespaces).
// ZooKeeper, in @zoott/zk-testkit's order: ZOOTT_ZK_CONNECT, a local install (ZOOKEEPER_HOME
// or Debian's `zookeeper` package), then a Docker engine for testcontainers.
// On Debian/Ubuntu as root the missing packages are installed here; elsewhere this says what
// to install and fails: a test suite that silently skips its real parts proves nothing.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const DEBIAN_JAR = '/usr/share/java/zookeeper.jar';
const CHROMIUM = process.env.ZOOTT_CHROMIUM ?? '/usr/bin/chromium';
const DEBIAN_RABBITMQ = '/usr/lib/rabbitmq/bin/rabbitmq-server';
const DEBIAN_OPENSSL = '/usr/bin/openssl';

const haveZooKeeper = () =>
  Boolean(process.env.ZOOTT_ZK_CONNECT) ||
  Boolean(process.env.ZOOKEEPER_HOME && existsSync(process.env.ZOOKEEPER_HOME)) ||
  (existsSync(DEBIAN_JAR) && spawnSync('java', ['-version']).status === 0);
const haveChromium = () => existsSync(CHROMIUM);
// In @zoott/rabbitmq-testkit's order: ZOOTT_AMQP_URL, Debian's rabbitmq-server, Docker.
const haveRabbitMq = () => Boolean(process.env.ZOOTT_AMQP_URL) || existsSync(DEBIAN_RABBITMQ);
// The TLS tests need a broker with a TLS listener, which only Debian's package gives (neither
// ZOOTT_AMQP_URL nor the Docker path does).
const haveDebianRabbitMq = () => existsSync(DEBIAN_RABBITMQ);
// In @zoott/rabbitmq-testkit's order: Debian's binary, then openssl on PATH. The TLS tests
// need a local broker too (the Docker path starts no TLS listener), hence no Docker way out.
const haveOpenssl = () =>
  existsSync(DEBIAN_OPENSSL) || spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0;
const haveDocker = () => spawnSync('docker', ['info'], { stdio: 'ignore' }).status === 0;
const haveIp = () => spawnSync('ip', ['-V'], { stdio: 'ignore' }).status === 0;
// The ensemble and secured-ZooKeeper tests start servers of their own (a secureClientPort, a
// JAAS file), from a local install only; their trust stores are made with the JDK's keytool,
// which the Java runtime ZooKeeper runs on brings (Debian: default-jre-headless).
const haveLocalZooKeeper = () =>
  Boolean(process.env.ZOOKEEPER_HOME && existsSync(process.env.ZOOKEEPER_HOME)) ||
  existsSync(DEBIAN_JAR);
const haveKeytool = () =>
  [process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'keytool') : null, 'keytool']
    .filter(Boolean)
    .some((k) => spawnSync(k, ['-help'], { stdio: 'ignore' }).status === 0);

const missing = [];
if (!haveZooKeeper()) missing.push('zookeeper');
if (!haveChromium()) missing.push('chromium');
if (!haveDebianRabbitMq()) missing.push('rabbitmq-server');
if (!haveOpenssl()) missing.push('openssl');
if (!haveIp()) missing.push('iproute2');
if (!haveLocalZooKeeper() && !missing.includes('zookeeper')) missing.push('zookeeper');
if (!haveKeytool()) missing.push('default-jre-headless');

if (
  missing.length > 0 &&
  process.getuid?.() === 0 &&
  spawnSync('apt-get', ['--version']).status === 0
) {
  console.log(`[zoott] installing Debian packages for the tests: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', ...missing], { stdio: 'inherit', env });
  } catch {
    // the checks below say what is still missing
  }
}

const problems = [];
if (!haveZooKeeper() && !haveDocker()) {
  problems.push(`The tests need a real ZooKeeper server and none can be found. Any one of:
  1. point at a running server:   export ZOOTT_ZK_CONNECT=127.0.0.1:2181
  2. install it locally:          sudo apt-get install zookeeper   (Debian/Ubuntu; brings Java)
                                  or unpack Apache ZooKeeper 3.8+ and export ZOOKEEPER_HOME=/path/to/it
  3. run a Docker engine:         the tests then start the official 'zookeeper' image via testcontainers`);
}
if (!haveRabbitMq() && !haveDocker()) {
  problems.push(`The AMQP bridge's tests need a real RabbitMQ broker and none can be found. Any one of:
  1. point at a running broker:   export ZOOTT_AMQP_URL=amqp://guest:guest@127.0.0.1:5672
  2. install it locally:          sudo apt-get install rabbitmq-server   (Debian/Ubuntu; brings Erlang)
  3. run a Docker engine:         the tests then start the official 'rabbitmq' image via testcontainers`);
} else if (!haveDebianRabbitMq()) {
  problems.push(`The AMQP bridge's TLS tests need Debian's rabbitmq-server (${DEBIAN_RABBITMQ}): a broker with a TLS
  listener is started only from it, not from ZOOTT_AMQP_URL or Docker. sudo apt-get install rabbitmq-server`);
}
if (!haveOpenssl()) {
  problems.push(`The AMQP bridge's TLS tests make a throwaway CA and certificates with the openssl binary, and there is none:
  sudo apt-get install openssl   (Debian/Ubuntu), or put openssl on PATH`);
}
if (!haveLocalZooKeeper()) {
  problems.push(`The ensemble and secured-ZooKeeper tests (TLS, SASL) start servers of their own and need a local install:
  sudo apt-get install zookeeper   (Debian/Ubuntu; brings Java and the Netty jars TLS needs)
  or unpack Apache ZooKeeper 3.8+ and export ZOOKEEPER_HOME=/path/to/it`);
}
if (!haveKeytool()) {
  problems.push(`The secured-ZooKeeper tests make their servers' trust stores with the JDK's keytool, and none runs:
  sudo apt-get install default-jre-headless   (Debian/Ubuntu), or set JAVA_HOME to a JDK or JRE`);
}
if (!haveChromium()) {
  problems.push(`The dashboard's browser tests need Chromium at ${CHROMIUM}:
  sudo apt-get install chromium   (Debian/Ubuntu), or export ZOOTT_CHROMIUM=/path/to/chromium`);
}
if (!haveIp() || process.getuid?.() !== 0) {
  problems.push(`The partition tests (zk-testkit's netns test, the reliability outage and namespace chaos tests) cut hosts
  apart with Linux network namespaces: they need the ip command (sudo apt-get install iproute2) and root.`);
}
if (problems.length > 0) {
  for (const p of problems) console.error(`[zoott] ${p}`);
  process.exit(1);
}
