#!/usr/bin/env node
// Makes sure the tests can start a real ZooKeeper before they run.
// Order of preference matches @zoott/zk-testkit: ZOOTT_ZK_CONNECT, a local install
// (ZOOKEEPER_HOME or Debian's `zookeeper` package), then a Docker engine for testcontainers.
// On Debian/Ubuntu as root the package is installed here; elsewhere this says what to install.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const DEBIAN_JAR = '/usr/share/java/zookeeper.jar';
const have = () =>
  Boolean(process.env.ZOOTT_ZK_CONNECT) ||
  Boolean(process.env.ZOOKEEPER_HOME && existsSync(process.env.ZOOKEEPER_HOME)) ||
  (existsSync(DEBIAN_JAR) && spawnSync('java', ['-version']).status === 0);

if (have()) process.exit(0);

const isRoot = process.getuid?.() === 0;
const hasApt = spawnSync('apt-get', ['--version']).status === 0;
if (isRoot && hasApt) {
  console.log(
    '[zoott] ZooKeeper is not installed: installing Debian packages `zookeeper` (with Java)...',
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', 'zookeeper'], { stdio: 'inherit', env });
  } catch {
    // fall through to the message below
  }
  if (have()) process.exit(0);
}

const docker = spawnSync('docker', ['info'], { stdio: 'ignore' }).status === 0;
if (docker) {
  console.log('[zoott] no local ZooKeeper; tests will use testcontainers on the Docker engine.');
  process.exit(0);
}

console.error(`[zoott] The tests need a real ZooKeeper server and none can be found. Any one of:
  1. point at a running server:   export ZOOTT_ZK_CONNECT=127.0.0.1:2181
  2. install it locally:          sudo apt-get install zookeeper   (Debian/Ubuntu; brings Java)
                                  or unpack Apache ZooKeeper 3.8+ and export ZOOKEEPER_HOME=/path/to/it
  3. run a Docker engine:         the tests then start the official 'zookeeper' image via testcontainers`);
process.exit(1);
