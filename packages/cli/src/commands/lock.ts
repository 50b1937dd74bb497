import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { Lock } from '@zoott/core/recipes';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ChildExitCode, ExitCode, signalExitCode } from '../exit-codes.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';

interface LockOptions {
  timeout?: string;
}

const FOREVER_MS = 365 * 86_400 * 1000;

/**
 * `zoott lock <name> [--timeout s] -- <command...>`: runs the command while holding the
 * zoott Lock `<lockDir>/<name>` (ephemeral, so it goes with the session if this process
 * dies). Exit code is the command's (128+n when a signal ended it); 6 when the lock could
 * not be had in time; 127 when the command does not exist. If the lock is lost while the
 * command runs, the command gets SIGTERM.
 */
const lockCommand: CommandBody = async (ctx, cmd: Command) => {
  const [name, argv] = cmd.processedArgs as [string, string[]];
  const opts = cmd.opts<LockOptions>();
  if (!argv?.length)
    throw new CliError(
      'lock needs a command to run',
      ExitCode.USAGE,
      'e.g. zoott lock nightly -- ./backup.sh',
    );
  let timeoutMs = FOREVER_MS;
  if (opts.timeout !== undefined) {
    const seconds = Number(opts.timeout);
    if (!Number.isFinite(seconds) || seconds < 0)
      throw new CliError(`--timeout ${opts.timeout}: must be a number of seconds >= 0`);
    timeoutMs = seconds === 0 ? -1 : Math.round(seconds * 1000);
  }
  const session = ctx.session();
  const coordinator = await session.coordinator();
  let child: ReturnType<typeof spawn> | null = null;
  let lost = false;
  const lock = new Lock(name, {
    coordinator,
    conf: session.conf(),
    onLost: (reason) => {
      lost = true;
      ctx.note(
        `zoott lock: lost the lock ${lock.path} (${reason === 'session' ? 'session ended' : 'node changed'}); stopping the command`,
      );
      child?.kill('SIGTERM');
    },
  });
  let announced = false;
  const acquire = (async () => {
    for await (const [holder] of lock.acquireLoop(timeoutMs)) {
      if (!announced)
        ctx.note(`zoott lock: waiting for ${lock.path} (held by ${holder ?? 'someone'})`);
      announced = true;
    }
  })();
  const interrupted = new Promise<'interrupted'>((resolve) => {
    if (ctx.signal.aborted) resolve('interrupted');
    ctx.signal.addEventListener('abort', () => resolve('interrupted'), { once: true });
  });
  if (
    (await Promise.race([acquire.then(() => 'acquired' as const), interrupted])) === 'interrupted'
  ) {
    acquire.catch(() => undefined);
    return ExitCode.INTERRUPTED;
  }
  try {
    const [file, ...args] = argv as [string, ...string[]];
    return await new Promise<number>((resolve) => {
      const childProcess = spawn(file, args, { stdio: 'inherit' });
      child = childProcess;
      const forward = () => childProcess.kill('SIGTERM');
      ctx.signal.addEventListener('abort', forward, { once: true });
      childProcess.on('error', (err: NodeJS.ErrnoException) => {
        ctx.signal.removeEventListener('abort', forward);
        ctx.note(
          `zoott lock: cannot run ${file}: ${err.code === 'ENOENT' ? 'command not found' : err.message}`,
        );
        resolve(err.code === 'ENOENT' ? ChildExitCode.NOT_FOUND : ChildExitCode.CANNOT_EXECUTE);
      });
      childProcess.on('exit', (code, signal) => {
        ctx.signal.removeEventListener('abort', forward);
        if (code !== null) resolve(code);
        else resolve(signalExitCode(signal ? (constants.signals[signal] ?? 1) : 1));
      });
    });
  } finally {
    if (!lost) await lock.release().catch(() => undefined);
    else await lock.close();
  }
};

export const lockVerb: Verb = {
  define: (program) =>
    program
      .command('lock')
      .argument('<name>', 'lock name')
      .argument('<command...>', 'command to run after --')
      .description('run a command while holding a zoott Lock')
      .option(
        '--timeout <seconds>',
        'give up waiting for the lock after this long (exit 6); 0 tries once',
      ),
  examples: ['zoott lock nightly --timeout 30 -- ./backup.sh --full'],
  run: lockCommand,
};
