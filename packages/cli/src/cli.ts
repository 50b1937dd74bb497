import { ZOOTT_VERSION } from '@zoott/core';
import { Command, CommanderError } from 'commander';
import { onClosedOutput } from './closed-output.js';
import { cancelVerb } from './commands/cancel.js';
import { cleanVerb } from './commands/clean.js';
import { dashboardVerb } from './commands/dashboard.js';
import { demoVerb } from './commands/demo.js';
import { doctorVerb } from './commands/doctor.js';
import { drainVerb } from './commands/drain.js';
import { exportVerb } from './commands/export.js';
import { importVerb } from './commands/import.js';
import { initVerb } from './commands/init.js';
import { limitVerb } from './commands/limit.js';
import { lockVerb } from './commands/lock.js';
import { lockDownVerb } from './commands/lock-down.js';
import { lsVerb } from './commands/ls.js';
import { parkedVerb } from './commands/parked.js';
import { pauseVerb, resumeVerb } from './commands/pause.js';
import { queueVerb } from './commands/queue.js';
import { retentionVerb } from './commands/retention.js';
import { retryVerb } from './commands/retry.js';
import { scheduleVerbs } from './commands/schedule.js';
import { showVerb } from './commands/show.js';
import { statusVerb } from './commands/status.js';
import { submitVerb } from './commands/submit.js';
import { treeVerb } from './commands/tree.js';
import { waitVerb } from './commands/wait.js';
import { watchVerb } from './commands/watch.js';
import { workersVerb } from './commands/workers.js';
import { worldsVerb } from './commands/worlds.js';
import { ExitCode, exitCodesHelp } from './exit-codes.js';
import { addGlobalOptions } from './global-settings.js';
import { type RunState, runner } from './runner.js';
import { addVerb, type Verb } from './verb.js';

/** The version `zoott --version` reports: zoott's one version, from core. */
export const VERSION = ZOOTT_VERSION;

/**
 * Every verb, one a line, in the order `zoott --help` lists them (grouped by what they are
 * for). A verb is defined whole in its module under commands/; adding one is that module
 * and its line here.
 */
const VERBS: readonly Verb[] = [
  // Worlds: create, list, lock, check.
  initVerb,
  worldsVerb,
  lockDownVerb,
  doctorVerb,
  retentionVerb,
  // Work in, results out.
  queueVerb,
  submitVerb,
  waitVerb,
  parkedVerb,
  // Looking at a world.
  statusVerb,
  treeVerb,
  lsVerb,
  showVerb,
  watchVerb,
  drainVerb,
  // Acting on tasks.
  retryVerb,
  cancelVerb,
  pauseVerb,
  resumeVerb,
  cleanVerb,
  // Workers.
  workersVerb,
  // Schedules and rate limits.
  ...scheduleVerbs,
  limitVerb,
  // ZooKeeper nodes.
  exportVerb,
  importVerb,
  lockVerb,
  // Programs.
  dashboardVerb,
  demoVerb,
];

const EPILOG = `
Connection: --connect, else ZOOTT_CONNECT, else the config file (--config, ZOOTT_CONFIG,
./zoott.config.yaml, ~/.config/zoott/config.yaml), else 127.0.0.1:2181. A chroot is allowed:
--connect h1:2181,h2:2181/myapp. \`zoott demo\` without any of them runs embedded (no ZooKeeper).
Tasks are named by key a|b|c or by tree path a/b/c.
\`lock\` and \`submit --wait\` exit with the command's / job's own code when it ran.
${exitCodesHelp('zoott')}`;

/** Builds the `zoott` program; actions record their exit code in `state`. */
export function buildProgram(state: RunState): Command {
  const program = new Command('zoott')
    .description('zoott: a task tree and job runner coordinated through ZooKeeper')
    .version(VERSION)
    .showSuggestionAfterError()
    .addHelpText('after', EPILOG);
  // The rows of the global settings (global-settings.ts), TLS and SASL shared with zoott-worker.
  addGlobalOptions(program);
  const action = runner(state);
  for (const verb of VERBS) addVerb(program, verb, action);
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
  const state: RunState = { signal: controller.signal, exitCode: ExitCode.OK, outputClosed: false };
  const stopWatching = onClosedOutput(() => {
    state.outputClosed = true;
    controller.abort(new Error('the output was closed'));
  });
  const program = buildProgram(state);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (state.outputClosed) return ExitCode.OK;
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
    stopWatching();
  }
  return state.outputClosed ? ExitCode.OK : state.exitCode;
}
