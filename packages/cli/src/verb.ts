import type { Command } from 'commander';
import type { CommandBody } from './runner.js';

/**
 * One `zoott` verb, defined whole in its own module under `commands/`: its command line
 * (name, arguments, options, description), the examples its `--help` ends with, and the body
 * its action runs. `cli.ts` only lists the verbs, so adding one is a module and a line there.
 */
export interface Verb {
  /**
   * Declares the verb on the program: `program.command('name')` with its arguments, options
   * and description. Returns that new command (no `.action`: `run` is attached for it).
   */
  define(program: Command): Command;
  /** Command lines shown under "Examples:" at the end of the verb's --help (without `$ `). */
  examples: readonly string[];
  /** What the verb does; resolves to its exit code by name (see runner.ts). */
  run: CommandBody;
}

/** Wraps a body as a commander action: the runner of the program (see runner.ts). */
export type ActionOf = (body: CommandBody) => (...args: unknown[]) => Promise<void>;

/** Collects a repeatable option: `--hint a --hint b` gives `['a', 'b']`. */
export const repeatable = (value: string, previous: string[] = []): string[] => [
  ...previous,
  value,
];

/** The "Examples:" block after a command's help. */
function examplesHelp(lines: readonly string[]): string {
  return `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}

/** Adds one verb to the program: its command, its action, its examples. */
export function addVerb(program: Command, verb: Verb, action: ActionOf): Command {
  const cmd = verb.define(program).action(action(verb.run));
  if (verb.examples.length > 0) cmd.addHelpText('after', examplesHelp(verb.examples));
  return cmd;
}
