import { AmqpAccessError, AmqpTlsError, startAmqpBridge } from '@zoott/amqp-bridge';
import { isZoottError } from '@zoott/core';
import {
  credentialsOf,
  ExitCode,
  exitCodesHelp,
  settingFlags,
  settingHelp,
  zkSecurityHint,
  zkSecurityOptions,
} from '@zoott/jobs/config';
import { connectZk } from '@zoott/zk-adapter';
import { Command, Option } from 'commander';
import { pino } from 'pino';
import {
  BRIDGE_CONFIG_ENV,
  BRIDGE_CREDENTIAL_RULES,
  BRIDGE_SETTINGS,
  type BridgeSettings,
  readBridgeConfig,
  resolveBridgeSettings,
  shownValue,
} from './settings.js';
import { tlsSocketOptions } from './tls-files.js';

/**
 * The exit code of an error that ended the bridge, from the table the three programs share:
 * ZooKeeper's refusals and a missing world mean what they mean for `zoott` and
 * `zoott-worker`; RabbitMQ's own have codes of their own.
 */
function exitCodeOf(err: unknown): number {
  if (err instanceof AmqpTlsError) return ExitCode.AMQP_TLS;
  if (err instanceof AmqpAccessError) return ExitCode.AMQP_ACCESS;
  if (!isZoottError(err)) return ExitCode.FAILURE;
  switch (err.code) {
    case 'INVALID_CONFIG':
      return ExitCode.USAGE;
    case 'CONNECTION_LOSS':
    case 'OPERATION_TIMEOUT':
    case 'NO_ZOOKEEPER':
    case 'SESSION_EXPIRED':
      return ExitCode.UNREACHABLE;
    case 'AUTH_FAILED':
    case 'NO_AUTH':
      return ExitCode.AUTH;
    case 'WORLD_NOT_INITIALISED':
      return ExitCode.NOT_FOUND;
    default:
      return ExitCode.FAILURE;
  }
}

/** What to change, by which side refused the TLS handshake. */
const TLS_HINTS: Record<AmqpTlsError['kind'], string> = {
  'untrusted-broker':
    "give the CA that signed the broker's certificate with --amqp-ca (ZOOTT_AMQP_CA, amqpCa), and connect by a name the certificate holds",
  'refused-client':
    'give a client certificate the broker accepts with --amqp-cert and --amqp-key (ZOOTT_AMQP_CERT/ZOOTT_AMQP_KEY, amqpCert/amqpKey)',
  handshake:
    'check --amqp-cert/--amqp-key (a certificate and its key, PEM) and the TLS versions the broker takes',
};

/** What to change, by what RabbitMQ refused (names the user and vhost, never the password). */
function accessHint({ kind, user, vhost }: AmqpAccessError): string {
  const grant = `rabbitmqctl set_permissions -p '${vhost}' '${user}' <configure> <write> <read>`;
  if (kind === 'login')
    return `check the user and password in --amqp-url (ZOOTT_AMQP_URL, amqpUrl); on the broker, rabbitmqctl authenticate_user '${user}' <password> checks them`;
  if (kind === 'vhost')
    return `name an existing vhost as the path of --amqp-url (amqp://host:5672/<vhost>, no path for "/"; rabbitmqctl list_vhosts lists them) and give the user permissions on it: ${grant}`;
  return `the user needs configure permission on the queues to declare them (or --declare-queues false, the queues declared elsewhere), read permission to consume them, and write permission on the exchanges results go to: ${grant}`;
}

const program = new Command('zoott-amqp-bridge')
  .description(
    'Carries Yothalot JSON jobs from RabbitMQ queues into a zoott world (where zoott-worker runs ' +
      'them) and publishes each result to the exchange and routing key its job names. Every ' +
      'setting is a flag, an environment variable or a key of the config file (in that order).',
  )
  .addOption(
    new Option('--config <file>', `config file, YAML or JSON (default: $${BRIDGE_CONFIG_ENV})`),
  )
  .option('--print-config', 'print the resolved settings and where each came from, then exit')
  .option('--json', 'with --print-config: one JSON document');

const options = new Map<keyof BridgeSettings, Option>();
for (const spec of BRIDGE_SETTINGS) {
  const opt = new Option(settingFlags(spec, 'optional-value'), settingHelp(spec));
  if (spec.kind === 'list')
    opt.argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), ...v.split(',')]);
  options.set(spec.key, opt);
  program.addOption(opt);
}
program.addHelpText(
  'after',
  `
${exitCodesHelp('zoott-amqp-bridge')}
stderr says which setting to change. (Earlier releases exited 4 when TLS with RabbitMQ
failed and 5 when RabbitMQ refused access; 4 and 5 now mean what they mean for zoott and
zoott-worker.)

Example:
  ZOOTT_AMQP_URL=amqps://bridge:secret@mq1:5671/prod zoott-amqp-bridge \\
    --connect zk1:2181/myapp --world jobs --job-queue jobs --race-queue races \\
    --dead-letter-exchange zoott.rejected
`,
);

async function main(): Promise<void> {
  program.parse();
  const opts = program.opts<Record<string, unknown>>();
  const flags: Partial<Record<keyof BridgeSettings, unknown>> = {};
  for (const [key, opt] of options) {
    const value = opts[opt.attributeName()];
    if (value !== undefined) flags[key] = value;
  }
  const configPath = (opts.config as string | undefined) ?? process.env[BRIDGE_CONFIG_ENV];
  const file = configPath ? readBridgeConfig(configPath) : {};
  const resolved = resolveBridgeSettings({
    flags,
    env: process.env,
    file,
    ...(configPath ? { fileName: configPath } : {}),
  });
  const { settings, sources } = resolved;
  if (opts.printConfig) {
    const rows = BRIDGE_SETTINGS.map((spec) => ({
      key: spec.key,
      value: shownValue(spec, settings[spec.key]),
      source: sources[spec.key] ?? 'unset',
    }));
    if (opts.json) {
      const doc = Object.fromEntries(
        rows.map((r) => [r.key, { value: r.value, source: r.source }]),
      );
      process.stdout.write(
        `${JSON.stringify({ configFile: configPath ?? null, settings: doc }, null, 2)}\n`,
      );
    } else {
      const width = Math.max(...rows.map((r) => r.key.length));
      const lines = rows.map(
        (r) => `${r.key.padEnd(width)}  ${r.value === null ? '-' : String(r.value)}  (${r.source})`,
      );
      process.stdout.write(`config file: ${configPath ?? 'none'}\n${lines.join('\n')}\n`);
    }
    return;
  }
  // Read before anything connects: a missing PEM file is bad configuration (exit 2).
  const tls = tlsSocketOptions(resolved);
  const logger = pino({
    level: settings.logLevel,
    base: { pid: process.pid, world: settings.world },
  });
  const auth = credentialsOf(settings, BRIDGE_CREDENTIAL_RULES);
  const coordinator = await connectZk(settings.connect, {
    sessionTimeoutMs: settings.sessionTimeoutMs,
    auth,
    ...zkSecurityOptions(settings, sources, configPath),
  });
  // The SDK is loaded only when asked for.
  const tracing = settings.trace ? await startTracingFor('zoott-amqp-bridge') : null;
  const bridge = await startAmqpBridge({
    coordinator,
    world: settings.world,
    url: settings.amqpUrl,
    socketOptions: tls,
    jobQueue: settings.jobQueue,
    raceQueue: settings.raceQueue,
    prefetch: settings.prefetch,
    declareQueues: settings.declareQueues,
    createWorld: settings.createWorld,
    maxDeliveries: settings.maxDeliveries,
    parkAfterMs: settings.parkAfterMs,
    ...(settings.replyExchanges && settings.replyExchanges.length > 0
      ? { replyExchanges: settings.replyExchanges }
      : {}),
    ...(settings.deadLetterExchange ? { deadLetterExchange: settings.deadLetterExchange } : {}),
    logger,
    ...(tracing ? { telemetry: tracing.telemetry } : {}),
  });
  logger.info({ jobQueue: settings.jobQueue, raceQueue: settings.raceQueue }, 'bridge running');
  const stop = () => {
    void bridge.stop().then(
      async () => {
        await coordinator.close();
        // Spans still buffered are sent before the process ends.
        await tracing?.shutdown();
        process.exit(ExitCode.OK);
      },
      () => process.exit(ExitCode.FAILURE),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

/** Starts OpenTelemetry's SDK from the OTEL_* variables; says where spans go. */
async function startTracingFor(program: string) {
  const { describeTracing, startTracing } = await import('@zoott/otel/sdk');
  const say = (m: string) => process.stderr.write(`${program}: tracing: ${m}\n`);
  const tracing = await startTracing({ serviceName: program, warn: say });
  say(describeTracing(tracing));
  return tracing;
}

main().catch((err: unknown) => {
  process.stderr.write(`zoott-amqp-bridge: ${err instanceof Error ? err.message : String(err)}\n`);
  if (err instanceof AmqpTlsError) process.stderr.write(`  ${TLS_HINTS[err.kind]}\n`);
  if (err instanceof AmqpAccessError) process.stderr.write(`  ${accessHint(err)}\n`);
  const zkHint = isZoottError(err) ? zkSecurityHint(err) : null;
  if (zkHint) process.stderr.write(`  ${zkHint}\n`);
  process.exit(exitCodeOf(err));
});
