import { ZOOTT_VERSION } from '@zoott/core';
import { Command, CommanderError } from 'commander';
import { cancelCommand } from './commands/cancel.js';
import { dashboardCommand } from './commands/dashboard.js';
import { demoCommand } from './commands/demo.js';
import { doctorCommand } from './commands/doctor.js';
import { drainCommand } from './commands/drain.js';
import { exportCommand } from './commands/export.js';
import { importCommand } from './commands/import.js';
import { initCommand } from './commands/init.js';
import { registerLimitCommand } from './commands/limit.js';
import { lockCommand } from './commands/lock.js';
import { lockDownCommand } from './commands/lock-down.js';
import { lsCommand } from './commands/ls.js';
import { queueCommand } from './commands/queue.js';
import { retryCommand } from './commands/retry.js';
import { registerScheduleCommand } from './commands/schedule.js';
import { showCommand } from './commands/show.js';
import { statusCommand } from './commands/status.js';
import { submitCommand } from './commands/submit.js';
import { treeCommand } from './commands/tree.js';
import { waitCommand } from './commands/wait.js';
import { watchCommand } from './commands/watch.js';
import { workersCommand } from './commands/workers.js';
import { ExitCode } from './exit-codes.js';
import { type RunState, runner } from './runner.js';

/** The version `zoott --version` reports: zoott's one version, from core. */
export const VERSION = ZOOTT_VERSION;

const collect = (value: string, previous: string[] = []) => [...previous, value];

function example(cmd: Command, ...lines: string[]): Command {
  return cmd.addHelpText(
    'after',
    `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`,
  );
}

const EPILOG = `
Connection: --connect, else ZOOTT_CONNECT, else the config file (--config, ZOOTT_CONFIG,
./zoott.config.yaml, ~/.config/zoott/config.yaml), else 127.0.0.1:2181. A chroot is allowed:
--connect h1:2181,h2:2181/myapp. \`zoott demo\` without any of them runs embedded (no ZooKeeper).
Tasks are named by key a|b|c or by tree path a/b/c.
Exit codes: 0 ok, 1 unexpected error, 2 bad usage or input, 3 ZooKeeper unreachable,
4 auth failure, 5 not found, 6 timeout, 7 wrong task state, 8 tasks failed,
9 the task asked about is corrupt, 130 interrupted;
\`lock\` and \`submit --wait\` exit with the command's / job's own code.`;

/** Builds the `zoott` program; actions record their exit code in `state`. */
export function buildProgram(state: RunState): Command {
  const run = runner(state);
  const program = new Command('zoott')
    .description('zoott: a task tree and job runner coordinated through ZooKeeper')
    .version(VERSION)
    .option('-c, --connect <hosts>', 'ZooKeeper connect string, chroot allowed (env ZOOTT_CONNECT)')
    .option(
      '-a, --auth <user:password>',
      'digest credentials, also digest:user:password (env ZOOTT_AUTH; prefer it or --auth-file: a command line is readable by every local user)',
    )
    .option(
      '--auth-file <path>',
      'credentials file, one user:password a line (env ZOOTT_AUTH_FILE)',
    )
    .option('-w, --world <name>', 'world to work on (env ZOOTT_WORLD; default "default")')
    .option('--config <file>', 'config file (env ZOOTT_CONFIG)')
    .option('--connect-timeout <seconds>', 'how long to wait for ZooKeeper (default 10)')
    .option('--json', 'print one JSON document on stdout (JSON lines for watch)')
    .option('--debug', 'print stack traces and engine warnings')
    .showSuggestionAfterError()
    .addHelpText('after', EPILOG);

  example(
    program
      .command('init')
      .argument('<world>', 'world name')
      .description('create a world (and the chroot of the connect string)')
      .option('--buckets <n>', 'buckets per area, fixed for the world (default 64)')
      .action(run(initCommand)),
    'zoott --connect 127.0.0.1:2181/myapp init files',
  );

  example(
    program
      .command('lock-down')
      .argument('<world>', 'world name')
      .description("give every node of a world (and its reply paths) the --auth credentials' ACL")
      .action(run(lockDownCommand)),
    'zoott --auth alice:s3cret lock-down files',
  );

  example(
    program
      .command('doctor')
      .argument('<world>', 'world name')
      .description("a world's health: corrupt nodes, ghost claims and workers, orphans, weak ACLs")
      .option('--repair', 'move what is safe to move into /zoott_q/<world> (never deletes)')
      .action(run(doctorCommand)),
    'zoott --auth alice:s3cret doctor files',
    'zoott doctor files --repair --json',
  );

  example(
    program
      .command('queue')
      .argument('[name]', 'task name')
      .description('queue a task, or many from a JSON-lines file')
      .option('-t, --type <type>', 'task type (workers pick handlers by it)')
      .option('-d, --data <json|@file>', 'JSON payload, inline or @file')
      .option('--parent <task>', 'queue under this exact task (a|b or a/b)')
      .option('--parent-name <regex>', 'queue under every task whose whole name matches')
      .option('--parent-type <regex>', 'and whose type matches')
      .option(
        '--child-name <template>',
        'child name per parent: {name} {parent} {1}..{9} (groups of --parent-name)',
      )
      .option('-p, --priority <n>', 'higher runs first (default 0)')
      .option(
        '--hint <key=value>',
        'placement hint server=, filename= or dataset= (repeatable)',
        collect,
      )
      .option('--attempts <n>', 'attempts before the task is dead-lettered (default 3)')
      .option(
        '--from <tasks.jsonl>',
        'queue every line {"name","type","data","parent","childName","priority","hints","attempts"}',
      )
      .action(run(queueCommand)),
    `zoott queue requestFile_a --type requestFile --data '{"url":"http://x/a"}'`,
    `zoott queue downloadFile --type downloadFile --parent-name 'requestFile_(.*)' --child-name 'downloadFile_{1}'`,
    'zoott queue --from tasks.jsonl',
  );

  example(
    program
      .command('submit')
      .argument('<job.json>', 'a regular or race job (Yothalot JSON)')
      .description('submit a JSON job to the workers')
      .option('--wait', "wait for the result, print it, exit with the job's own exit code")
      .option('--timeout <seconds>', 'with --wait: give up after this long')
      .option('--name <name>', 'task name (default: generated)')
      .option('-p, --priority <n>', 'higher runs first')
      .action(run(submitCommand)),
    'zoott submit job.json --wait',
  );

  example(
    program
      .command('wait')
      .argument('<routingkey>', 'routing key of the reply path')
      .description('wait for the next result published on a reply path after it began')
      .option('--exchange <name>', 'exchange (default: the default exchange)')
      .option('--timeout <seconds>', 'give up after this long (exit 6)')
      .option('--peek', 'leave the result in place instead of consuming it')
      .option('--any', 'also take a result that was already there (the oldest)')
      .action(run(waitCommand)),
    'zoott wait nightly-report --timeout 60',
  );

  example(
    program
      .command('status')
      .description('counts per area, workers and their buckets, oldest pending age')
      .action(run(statusCommand)),
    'zoott status --json',
  );

  example(
    program
      .command('tree')
      .argument('[task]', 'only this subtree')
      .description("the task tree with each task's state")
      .action(run(treeCommand)),
    'zoott --world files tree',
    'zoott tree requestFile_a',
  );

  example(
    program
      .command('ls')
      .argument('<state>', 'pending | working | completed | failed')
      .description('list the tasks in one state')
      .action(run(lsCommand)),
    'zoott ls failed --json',
  );

  example(
    program
      .command('show')
      .argument('<task>', 'a|b|c or a/b/c')
      .description("a task's full record")
      .action(run(showCommand)),
    'zoott show "requestFile_a|downloadFile_a"',
  );

  example(
    program
      .command('watch')
      .description('stream task events live (JSON lines with --json)')
      .option('--count <n>', 'stop after n events')
      .option('--timeout <seconds>', 'stop after this long')
      .action(run(watchCommand)),
    'zoott watch --json | jq .key',
  );

  example(
    program
      .command('drain')
      .description('wait until nothing is pending or working, with a progress bar')
      .option('--timeout <seconds>', 'give up after this long (exit 6)')
      .option('--interval <seconds>', 'poll interval (default 0.5)')
      .action(run(drainCommand)),
    'zoott drain --timeout 600',
  );

  example(
    program
      .command('retry')
      .argument('[task]', 'a failed task')
      .description('retry a dead-lettered task, or all of them')
      .option('--all-failed', 'retry every failed task of the world')
      .action(run(retryCommand)),
    'zoott retry "requestFile_a|downloadFile_a"',
    'zoott retry --all-failed',
  );

  example(
    program
      .command('cancel')
      .argument('<task>', 'a|b|c or a/b/c')
      .description('cancel a task')
      .option('--subtree', 'also cancel every descendant')
      .action(run(cancelCommand)),
    'zoott cancel requestFile_a --subtree',
  );

  example(
    program
      .command('workers')
      .description('live workers: health, buckets, what each runs')
      .action(run(workersCommand)),
    'zoott workers',
  );

  example(
    program
      .command('export')
      .argument('<path>', 'node path to export')
      .description('export a subtree (hierarchy format: __val__, __acl__, children)')
      .option('-o, --output <file>', 'write to file.yaml / file.json instead of stdout')
      .action(run(exportCommand)),
    'zoott export /myapp -o myapp.yaml',
  );

  example(
    program
      .command('import')
      .argument('<file>', 'a .yaml/.yml/.json hierarchy')
      .description('create the nodes of a hierarchy file')
      .option('--root <path>', 'create the top-level names under this path (default /)')
      .option(
        '--user <name:password>',
        'password of a digest user named in __acl__ (repeatable)',
        collect,
      )
      .option('--users <file>', 'YAML/JSON map of user names to passwords')
      .option('--update', 'also overwrite the values of nodes that exist')
      .action(run(importCommand)),
    'zoott import myapp.yaml --root /copy --user xp:123',
  );

  example(
    program
      .command('lock')
      .argument('<name>', 'lock name')
      .argument('<command...>', 'command to run after --')
      .description('run a command while holding a zoott Lock')
      .option(
        '--timeout <seconds>',
        'give up waiting for the lock after this long (exit 6); 0 tries once',
      )
      .action(run(lockCommand)),
    'zoott lock nightly --timeout 30 -- ./backup.sh --full',
  );

  registerScheduleCommand(program, run);
  registerLimitCommand(program, run);

  const dashboardOptions = (cmd: Command) =>
    cmd
      .option('--port <n>', 'TCP port of the dashboard (default 7070; 0 = any free port)')
      .option('--host <addr>', 'interface to bind; beyond loopback needs a token', '127.0.0.1')
      .option('--read-only', 'hide and refuse retry and cancel')
      .option('--token <token>', 'access token (env ZOOTT_DASHBOARD_TOKEN; default: a random one)')
      .option('--no-token', 'serve without a token (loopback only)');

  example(
    dashboardOptions(
      program
        .command('dashboard')
        .description('serve the web dashboard: counts, tree, tasks, workers, dead letters (live)'),
    ).action(run(dashboardCommand)),
    'zoott --connect 127.0.0.1:2181 dashboard --world files --read-only',
    'zoott dashboard --host 0.0.0.0 --token "$(openssl rand -hex 16)"',
  );

  example(
    program
      .command('demo')
      .description('queue a sample world and run it through workers, with live progress')
      .option('--items <n>', 'items in the sample world (default 24)')
      .option('--workers <n>', 'workers (default 4)')
      .option('--embedded', 'force the in-memory coordinator even when a server is configured')
      .option(
        '--in-process',
        'with --connect: run the workers in this process instead of worker processes',
      )
      .option('--dashboard', 'serve the dashboard while the demo runs, and after it until Ctrl-C')
      .option('--port <n>', 'with --dashboard: its TCP port (default 7070)')
      .action(run(demoCommand)),
    'pnpm start                      # = zoott demo, embedded, no ZooKeeper needed',
    'zoott demo --connect 127.0.0.1:2181/zoott-demo --workers 3',
    'pnpm zoott demo --dashboard     # then open the URL it prints (with ?token=)',
  );

  for (const cmd of [program, ...program.commands]) cmd.exitOverride();
  return program;
}

/** Runs the CLI on `argv` (without node and script) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const controller = new AbortController();
  const onSignal = () => {
    if (controller.signal.aborted) process.exit(ExitCode.INTERRUPTED); // second Ctrl-C: now
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const state: RunState = { signal: controller.signal, exitCode: 0 };
  const program = buildProgram(state);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version' ||
        err.code === 'commander.help'
      )
        return ExitCode.OK;
      return ExitCode.USAGE; // commander already printed what was wrong
    }
    throw err;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return state.exitCode;
}
