import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** How to run a ZooKeeper server from an installation on this machine. */
export interface LocalInstall {
  java: string;
  /** Class path: the server jar(s) plus a logging binding so the log goes to our file. */
  classpath: string;
  /** Where it was found, for messages. */
  source: string;
}

const DEBIAN_JAR = '/usr/share/java/zookeeper.jar';
// Debian's zookeeper.jar names its other dependencies in its manifest; the slf4j binding is
// not among them, so without these two jars the server would log nowhere at all.
const DEBIAN_LOGGING = ['/usr/share/java/slf4j-log4j12.jar', '/usr/share/java/log4j-1.2.jar'];
// Nor are these, which Netty's TLS handler needs: without them a server with a
// secureClientPort starts, then closes every TLS connection (NoClassDefFoundError).
const DEBIAN_NETTY_TLS = [
  '/usr/share/java/netty-codec.jar',
  '/usr/share/java/netty-resolver.jar',
  '/usr/share/java/netty-transport-native-unix-common.jar',
];

function findJava(): string | null {
  const home = process.env.JAVA_HOME;
  const candidates = home ? [path.join(home, 'bin', 'java'), 'java'] : ['java'];
  for (const java of candidates) {
    if (spawnSync(java, ['-version'], { stdio: 'ignore' }).status === 0) return java;
  }
  return null;
}

/**
 * Finds ZooKeeper: `ZOOKEEPER_HOME` (an unpacked Apache release: `lib/*.jar`) first, then
 * Debian's `zookeeper` package. Returns the reason when there is none.
 */
export function findLocalInstall(): LocalInstall | { missing: string } {
  const java = findJava();
  const home = process.env.ZOOKEEPER_HOME;
  if (home) {
    const lib = path.join(home, 'lib');
    if (!existsSync(lib)) return { missing: `ZOOKEEPER_HOME=${home} has no lib/ folder` };
    if (!java) return { missing: 'ZOOKEEPER_HOME is set but no java runs (set JAVA_HOME)' };
    const jars = readdirSync(lib)
      .filter((f) => f.endsWith('.jar'))
      .map((f) => path.join(lib, f));
    return { java, classpath: jars.join(path.delimiter), source: `ZOOKEEPER_HOME=${home}` };
  }
  if (!existsSync(DEBIAN_JAR)) {
    return { missing: `no local install (ZOOKEEPER_HOME unset, ${DEBIAN_JAR} absent)` };
  }
  if (!java) return { missing: `${DEBIAN_JAR} is present but no java runs` };
  const classpath = [DEBIAN_JAR, ...[...DEBIAN_LOGGING, ...DEBIAN_NETTY_TLS].filter(existsSync)];
  return { java, classpath: classpath.join(path.delimiter), source: 'Debian package zookeeper' };
}
