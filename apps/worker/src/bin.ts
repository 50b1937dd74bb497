import { constants } from 'node:os';
import { ZOOTT_VERSION as VERSION } from '@zoott/core';
import {
  applyHeapRoom,
  CONFIG_ENVS,
  DEFAULT_HEAP_ROOM,
  describeSettings,
  ExitCode,
  exitCodesHelp,
  type FileSettings,
  type PrintedSetting,
  readWorkerConfig,
  resolveSettingsWithSources,
  SETTINGS,
  settingFlags,
  settingHelp,
  signalExitCode,
  zkSecurityOptions,
} from '@zoott/jobs/config';
import { Command, Option } from 'commander';
import { exitCodeOf } from './bin-errors.js';

const program = new Command('zoott-worker')
  .description(
    'The zoott worker daemon: claims tasks from a ZooKeeper task tree and runs them, including ' +
      'Yothalot-style JSON jobs (zoott.job, zoott.race) for executables on its --allow-exec list. ' +
      'Every setting is a flag, an environment variable or a key of the config file ' +
      '(precedence in that order).',
  )
  .version(VERSION)
  .addOption(
    new Option(
      '--config <file>',
      `config file, YAML or JSON, shared with the zoott CLI: top-level keys and a worker: section (default: $${CONFIG_ENVS.join(', then $')}, then ./zoott.config.yaml, ~/.config/zoott/config.yaml)`,
    ),
  )
  .option('--print-config', 'print the resolved settings and where each came from, then exit')
  .option('--json', 'with --print-config: one JSON document');

const collect = (value: string, previous: string[] | undefined) => [
  ...(previous ?? []),
  ...value.split(','),
];
// Each setting's Option, so its value is read back under commander's own attribute name:
// the table's key (`jobTimeoutMs`) is not the name commander derives from `--job-timeout`.
const options = new Map<keyof FileSettings, Option>();
for (const spec of SETTINGS) {
  const opt = new Option(settingFlags(spec), settingHelp(spec));
  if (spec.kind === 'list') opt.argParser(collect);
  options.set(spec.key, opt);
  program.addOption(opt);
}
program.addHelpText(
  'after',
  `
Signals: SIGTERM/SIGINT stop claiming, let running tasks finish within --grace, abort the
rest and exit 0; a second signal kills the job processes and exits at once.
${exitCodesHelp('zoott-worker')}

Example:
  zoott-worker --connect zk1:2181,zk2:2181/myapp --world jobs --concurrency 4 \\
    --allow-exec '/usr/bin/*,/opt/tools/**' --pass-env AWS_REGION --metrics-port 9464
`,
);

function printConfig(
  configFile: { path: string; from: string } | null,
  settings: PrintedSetting[],
  json: boolean,
): void {
  if (json) {
    const byKey = Object.fromEntries(
      settings.map((s) => [s.key, { value: s.value, source: s.source }]),
    );
    process.stdout.write(`${JSON.stringify({ configFile, settings: byKey }, null, 2)}\n`);
    return;
  }
  const lines = [
    `config file: ${configFile ? `${configFile.path} (from ${configFile.from})` : 'none'}`,
  ];
  const width = Math.max(...settings.map((s) => s.key.length));
  for (const setting of settings) {
    const value =
      setting.value === null
        ? '-'
        : Array.isArray(setting.value)
          ? setting.value.join(',')
          : String(setting.value);
    const source =
      setting.source === 'flag'
        ? setting.flag
        : setting.source === 'env'
          ? setting.env
          : setting.source;
    lines.push(`${setting.key.padEnd(width)}  ${value}  (${source})`);
  }
  // One write: `--print-config | head` must not end in EPIPE halfway.
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function main(): Promise<void> {
  // A reader that stops early (`| head`) is not an error of ours.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(ExitCode.OK);
    throw err;
  });
  program.parse();
  const opts = program.opts<Record<string, unknown>>();
  const flags: Partial<Record<keyof FileSettings, unknown>> = {};
  for (const [key, opt] of options) {
    const value = opts[opt.attributeName()];
    if (value !== undefined) flags[key] = value;
  }
  const { found, file } = readWorkerConfig({
    explicit: opts.config as string | undefined,
    env: process.env,
    cwd: process.cwd(),
  });
  const resolved = resolveSettingsWithSources({
    flags,
    env: process.env,
    file,
    ...(found ? { fileName: found.path } : {}),
  });
  if (opts.printConfig) {
    const from = found
      ? found.from === 'flag'
        ? '--config'
        : found.from === 'env'
          ? `$${found.envName}`
          : 'default path'
      : '';
    printConfig(
      found ? { path: found.path, from } : null,
      describeSettings(resolved),
      opts.json === true,
    );
    return;
  }
  // The TLS and SASL files are read now, so a missing one is refused naming its flag,
  // variable or file key (the daemon reads them again to connect).
  zkSecurityOptions(resolved.settings, resolved.sources, found?.path);
  // Before the daemon allocates anything: the heap's room for garbage is a property of the
  // process, which this program owns (a library running the daemon leaves it to its host).
  applyHeapRoom(resolved.settings.heapRoom ?? DEFAULT_HEAP_ROOM);
  // Loaded only to run: --print-config and --help stay quick and never touch ZooKeeper.
  const { startWorkerDaemon } = await import('@zoott/jobs');
  // The SDK is loaded only when asked for: a worker that does not trace never loads it.
  const tracing = resolved.settings.trace ? await startTracingFor('zoott-worker') : null;
  const telemetry = tracing ? { telemetry: tracing.telemetry } : {};
  const daemon = await startWorkerDaemon({ ...resolved.settings, ...telemetry });
  // Spans still buffered are sent before the process ends.
  const exit = (code: number) =>
    void (tracing?.shutdown() ?? Promise.resolve()).then(() => process.exit(code));

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) {
      // At once: kill every job process group (synchronously, inside kill) and leave. The
      // claims die with the session, so their tasks run again elsewhere; nothing is recorded.
      void daemon.kill();
      process.exit(signalExitCode(constants.signals[signal]));
    }
    void daemon.stop().then(
      () => exit(ExitCode.OK),
      () => exit(ExitCode.FAILURE),
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  await daemon.done;
  if (signals === 0) exit(ExitCode.FAILURE);
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
  const { code, hint } = exitCodeOf(err);
  process.stderr.write(`zoott-worker: ${err instanceof Error ? err.message : String(err)}\n`);
  if (hint) process.stderr.write(`hint: ${hint}\n`);
  process.exit(code);
});
