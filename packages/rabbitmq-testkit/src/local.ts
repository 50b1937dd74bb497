import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestCertificates } from './certs.js';
import { RabbitMqStartError } from './errors.js';
import { type AmqpTlsProbe, waitAmqp, waitTcp } from './ready.js';
import { type RabbitMqBroker, type RabbitMqTls, READY_TIMEOUT_MS } from './types.js';

/** Debian's `rabbitmq-server` package: the server script and its control tool. */
export const DEBIAN_SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';
const DEBIAN_CTL = '/usr/lib/rabbitmq/bin/rabbitmqctl';
const EPMD = 'epmd';

/** Whether Debian's broker is installed; the reason when not. */
export function localInstall(): true | string {
  if (!existsSync(DEBIAN_SERVER))
    return `${DEBIAN_SERVER} does not exist (Debian's rabbitmq-server package is not installed)`;
  return true;
}

/** The ports and names of one private broker. */
export interface LocalLayout {
  dir: string;
  /** Erlang node name, `<name>@localhost`. */
  nodeName: string;
  port: number;
  distPort: number;
  /** A private epmd (Erlang's port mapper) so the broker never meets another node. */
  epmdPort: number;
  /** A TLS listener too: its port, certificates, and whether a client certificate is required. */
  tls?: { port: number; certs: TestCertificates; requirePeerCert: boolean };
}

/**
 * rabbitmq.conf of a broker with a TLS listener. The plain listener stays (RABBITMQ_NODE_PORT):
 * readiness and the tests' own clients use it. `verify_peer` checks any certificate a client
 * presents against the CA; `fail_if_no_peer_cert` refuses clients without one.
 */
function tlsConfig(tls: NonNullable<LocalLayout['tls']>): string {
  return [
    `listeners.ssl.default = 127.0.0.1:${tls.port}`,
    `ssl_options.cacertfile = ${tls.certs.ca}`,
    `ssl_options.certfile = ${tls.certs.serverCert}`,
    `ssl_options.keyfile = ${tls.certs.serverKey}`,
    'ssl_options.verify = verify_peer',
    `ssl_options.fail_if_no_peer_cert = ${tls.requirePeerCert}`,
    '',
  ].join('\n');
}

/**
 * A broker run from Debian's package as a child of this process, private in every way:
 * its own node name, AMQP and distribution ports on 127.0.0.1, its own epmd, Erlang
 * cookie (HOME), mnesia, log, config and plugin files. Nothing of the system broker's
 * (/var/lib/rabbitmq, /etc/rabbitmq, port 5672, epmd 4369) is touched.
 */
export class LocalRabbitMq implements RabbitMqBroker {
  readonly kind = 'local' as const;
  readonly url: string;
  readonly port: number;
  readonly nodeName: string;
  readonly tls?: RabbitMqTls;
  private child: ChildProcess | null = null;
  private epmd: ChildProcess | null = null;
  private watchdog: ChildProcess | null = null;

  constructor(readonly layout: LocalLayout) {
    this.port = layout.port;
    this.nodeName = layout.nodeName;
    this.url = `amqp://guest:guest@127.0.0.1:${layout.port}`;
    for (const sub of ['mnesia', 'log', 'generated', 'plugins-expand'])
      mkdirSync(path.join(layout.dir, sub), { recursive: true });
    // No plugins: management and friends would open ports of their own and slow the boot.
    writeFileSync(path.join(layout.dir, 'enabled_plugins'), '[].\n');
    if (layout.tls) {
      const { port, certs, requirePeerCert } = layout.tls;
      writeFileSync(path.join(layout.dir, 'rabbitmq.conf'), tlsConfig(layout.tls));
      this.tls = { url: `amqps://guest:guest@127.0.0.1:${port}`, port, requirePeerCert, certs };
    }
  }

  /** How readiness speaks to the TLS listener: as a client the broker accepts. */
  private tlsProbe(): AmqpTlsProbe | undefined {
    const certs = this.layout.tls?.certs;
    if (!certs) return undefined;
    return {
      ca: readFileSync(certs.ca),
      cert: readFileSync(certs.clientCert),
      key: readFileSync(certs.clientKey),
    };
  }

  /** The environment of the server and of rabbitmqctl: everything points into `dir`. */
  env(): NodeJS.ProcessEnv {
    const { dir, nodeName, port, distPort, epmdPort } = this.layout;
    return {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      LANG: 'C.UTF-8',
      HOME: dir,
      ERL_EPMD_PORT: String(epmdPort),
      RABBITMQ_NODENAME: nodeName,
      RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
      RABBITMQ_NODE_PORT: String(port),
      RABBITMQ_DIST_PORT: String(distPort),
      RABBITMQ_MNESIA_BASE: path.join(dir, 'mnesia'),
      RABBITMQ_LOG_BASE: path.join(dir, 'log'),
      RABBITMQ_PID_FILE: path.join(dir, 'rabbitmq.pid'),
      RABBITMQ_CONFIG_FILE: path.join(dir, 'rabbitmq'),
      RABBITMQ_ADVANCED_CONFIG_FILE: path.join(dir, 'advanced.config'),
      RABBITMQ_CONF_ENV_FILE: path.join(dir, 'rabbitmq-env.conf'),
      RABBITMQ_ENABLED_PLUGINS_FILE: path.join(dir, 'enabled_plugins'),
      RABBITMQ_GENERATED_CONFIG_DIR: path.join(dir, 'generated'),
      RABBITMQ_PLUGINS_EXPAND_DIR: path.join(dir, 'plugins-expand'),
      // The script then execs the VM: our child IS the broker, and SIGKILL is a crash.
      RUNNING_UNDER_SYSTEMD: 'true',
    };
  }

  get running(): boolean {
    return this.child !== null;
  }

  /**
   * Starts the private epmd as a child of ours (in the foreground, not as the daemon the VM
   * would start by itself), so its pid is known and nothing outlives a stop or a crash of
   * this process; resolves once it accepts connections.
   */
  private async startEpmd(): Promise<void> {
    if (this.epmd) return;
    const epmd = spawn(EPMD, ['-port', String(this.layout.epmdPort)], {
      env: this.env(),
      stdio: 'ignore',
    });
    epmd.unref();
    this.epmd = epmd;
    epmd.once('exit', () => {
      if (this.epmd === epmd) this.epmd = null;
    });
    const why = await waitTcp(this.layout.epmdPort, 30_000, () =>
      epmd.exitCode !== null ? `epmd exited (${epmd.exitCode})` : null,
    );
    if (why) throw new RabbitMqStartError(`epmd on port ${this.layout.epmdPort}: ${why}`);
  }

  /** Starts the broker and waits until it answers AMQP (never a fixed sleep). */
  async start(): Promise<void> {
    if (this.child) return;
    await this.startEpmd();
    const out = openSync(path.join(this.layout.dir, 'stdout.log'), 'a');
    const child = spawn(DEBIAN_SERVER, [], {
      env: this.env(),
      cwd: this.layout.dir,
      stdio: ['ignore', out, out],
    });
    closeSync(out);
    child.unref();
    this.child = child;
    this.watchdog = this.guard(child);
    child.once('exit', () => {
      if (this.child === child) this.child = null;
    });
    const died = () =>
      child.exitCode !== null || child.signalCode !== null
        ? `the broker exited (${child.exitCode ?? child.signalCode}) before it was ready`
        : null;
    let why = await waitAmqp('127.0.0.1', this.port, READY_TIMEOUT_MS, died);
    // The TLS listener opens with the plain one, but is waited for on its own: a handshake
    // with the client certificate that ends in `connection.start`.
    const tls = this.layout.tls;
    if (!why && tls)
      why = await waitAmqp('127.0.0.1', tls.port, READY_TIMEOUT_MS, died, this.tlsProbe());
    if (why) {
      await this.stop({ kill: true });
      throw new RabbitMqStartError(
        `RabbitMQ ${this.nodeName} on port ${this.port}: ${why}; logs in ${this.layout.dir}:\n${this.logTail()}`,
      );
    }
  }

  /**
   * Stops the broker: `rabbitmqctl -n <node> stop` (graceful), or SIGKILL; then waits for
   * the process to end and stops the private epmd it started.
   */
  async stop(options: { kill?: boolean } = {}): Promise<void> {
    const child = this.child;
    if (child) {
      const gone = new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        else child.once('exit', () => resolve());
      });
      if (options.kill) child.kill('SIGKILL');
      else {
        const result = spawnSync(DEBIAN_CTL, ['-n', this.nodeName, 'stop'], {
          env: this.env(),
          stdio: 'ignore',
          timeout: 60_000,
        });
        if (result.status !== 0) child.kill('SIGKILL');
      }
      await gone;
      this.child = null;
    }
    this.watchdog?.kill('SIGKILL');
    this.watchdog = null;
    await this.stopEpmd();
  }

  private async stopEpmd(): Promise<void> {
    const epmd = this.epmd;
    if (!epmd) return;
    const gone = new Promise<void>((resolve) => {
      if (epmd.exitCode !== null || epmd.signalCode !== null) resolve();
      else epmd.once('exit', () => resolve());
    });
    epmd.kill('SIGKILL');
    await gone;
    this.epmd = null;
  }

  /**
   * A watchdog shell blocked on a pipe from this process: when this process dies for any
   * reason (a test worker SIGKILLed), the pipe closes and the shell kills the broker and
   * its epmd (both by pid), so no broker outlives the test run.
   */
  private guard(child: ChildProcess): ChildProcess | null {
    if (child.pid === undefined) return null;
    const watchdog = spawn(
      '/bin/sh',
      [
        '-c',
        'read _ ; kill -9 "$0" "$1" 2>/dev/null',
        String(child.pid),
        String(this.epmd?.pid ?? child.pid),
      ],
      { stdio: ['pipe', 'ignore', 'ignore'], env: this.env() },
    );
    watchdog.on('error', () => {});
    watchdog.unref();
    (watchdog.stdin as Socket | null)?.unref();
    return watchdog;
  }

  /** `rabbitmqctl -n <node> <args>` in the broker's environment (its cookie and epmd). */
  async rabbitmqctl(args: string[]): Promise<string> {
    const { stdout } = await promisify(execFile)(DEBIAN_CTL, ['-n', this.nodeName, ...args], {
      env: this.env(),
      timeout: 60_000,
    });
    return stdout;
  }

  /** The last lines of the broker's console and log, for error messages. */
  logTail(lines = 20): string {
    const tail = (file: string) => {
      if (!existsSync(file)) return '';
      return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    };
    return [
      tail(path.join(this.layout.dir, 'stdout.log')),
      tail(path.join(this.layout.dir, 'log', `${this.nodeName}.log`)),
    ]
      .filter(Boolean)
      .join('\n');
  }
}
