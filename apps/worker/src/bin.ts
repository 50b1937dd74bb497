import { Command, Option } from 'commander';
import {
  CONFIG_ENV,
  type FileSettings,
  readConfigFile,
  resolveSettings,
  SETTINGS,
} from './config.js';
import { startWorkerDaemon } from './daemon.js';
import { VERSION } from './version.js';

const program = new Command('zoott-worker')
  .description(
    'The zoott worker daemon: claims tasks from a ZooKeeper task tree and runs them, including ' +
      'Yothalot-style JSON jobs (zoott.job, zoott.race) for executables on its --allow-exec list. ' +
      'Every setting is a flag, an environment variable or a key of the JSON --config file ' +
      '(precedence in that order).',
  )
  .version(VERSION)
  .addOption(
    new Option('--config <file>', 'JSON config file with the keys below (camelCase)').env(
      CONFIG_ENV,
    ),
  );

const collect = (value: string, previous: string[] | undefined) => [
  ...(previous ?? []),
  ...value.split(','),
];
const attribute = new Map<string, string>();
for (const s of SETTINGS) {
  const help = `${s.help} [env ${s.env}; config "${s.key}"]${s.default ? ` (default: ${s.default})` : ''}`;
  const opt = new Option(`${s.flag} <${s.arg}>`, help);
  if (s.kind === 'list') opt.argParser(collect);
  program.addOption(opt);
  // Commander names the value after the flag (`--max-output` → maxOutput), not the key.
  attribute.set(s.key, opt.attributeName());
}
program.addHelpText(
  'after',
  `
Signals: SIGTERM/SIGINT stop claiming, let running tasks finish within --grace, abort the
rest and exit 0; a second signal kills the job processes and exits at once.

Example:
  zoott-worker --connect zk1:2181,zk2:2181/myapp --world jobs --concurrency 4 \\
    --allow-exec '/usr/bin/*,/opt/tools/**' --pass-env AWS_REGION --metrics-port 9464
`,
);

async function main(): Promise<void> {
  program.parse();
  const opts = program.opts<Record<string, unknown>>();
  const flags: Partial<Record<keyof FileSettings, unknown>> = {};
  for (const s of SETTINGS) {
    const value = opts[attribute.get(s.key) ?? s.key];
    if (value !== undefined) flags[s.key] = value;
  }
  const fileName = opts.config as string | undefined;
  const settings = resolveSettings({
    flags,
    env: process.env,
    ...(fileName ? { file: readConfigFile(fileName), fileName } : {}),
  });
  const daemon = await startWorkerDaemon(settings);

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) {
      // At once: kill every job process group (synchronously, inside kill) and leave. The
      // claims die with the session, so their tasks run again elsewhere; nothing is recorded.
      void daemon.kill();
      process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
    }
    void daemon.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  await daemon.done;
  if (signals === 0) process.exit(1);
}

main().catch((err: unknown) => {
  process.stderr.write(`zoott-worker: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});
