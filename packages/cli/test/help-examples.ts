import { type Coordinator, type Engine, PermanentError } from '@zoott/core';
import { publishResult } from '@zoott/jobs';
import { expect } from 'vitest';
import { buildProgram } from '../src/cli.js';
import { type RunResult, start, until, zoott } from './helpers.js';

/** Every command path of the program: `['queue']`, `['schedule', 'add']`, ... */
export function commandPaths(): string[][] {
  const program = buildProgram({ signal: new AbortController().signal, exitCode: 0 });
  const out: string[][] = [];
  const walk = (cmd: typeof program, path: string[]) => {
    for (const sub of cmd.commands) {
      out.push([...path, sub.name()]);
      walk(sub, [...path, sub.name()]);
    }
  };
  walk(program, []);
  return out;
}

/**
 * The example command lines every verb's `--help` ends with, read from the built binary's
 * own help output (so what a user sees is what is run).
 */
export async function helpExamples(): Promise<string[]> {
  const results: RunResult[] = await Promise.all(
    commandPaths().map((path) => zoott([...path, '--help'])),
  );
  const out: string[] = [];
  for (const r of results) for (const m of r.stdout.matchAll(/^ {2}\$ (.+)$/gm)) out.push(m[1]!);
  return out;
}

/** Splits a `zoott ...` example into the words after `zoott` (see `splitCommandLine`). */
export function shellWords(line: string): string[] {
  const words = splitCommandLine(line);
  if (words[0] !== 'zoott') throw new Error(`not a zoott command: ${line}`);
  return words.slice(1);
}

/**
 * Splits a command line as a POSIX shell would for the words the examples use: single and
 * double quotes, and a trailing `# comment`. Anything that needs a real shell (a pipe, `$(`,
 * `&`) is refused, so such an example cannot be run half-way by accident.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (ch === "'" || ch === '"') {
      const end = line.indexOf(ch, i + 1);
      if (end < 0) throw new Error(`unclosed quote in: ${line}`);
      const inner = line.slice(i + 1, end);
      if (ch === '"' && /[$`\\]/.test(inner)) throw new Error(`needs a shell: ${line}`);
      word = (word ?? '') + inner;
      i = end;
    } else if (ch === ' ') {
      if (word !== null) words.push(word);
      word = null;
    } else if (ch === '#' && word === null) {
      break;
    } else if ('|$`;&<>'.includes(ch)) {
      throw new Error(`needs a shell: ${line}`);
    } else word = (word ?? '') + ch;
  }
  if (word !== null) words.push(word);
  return words;
}

/** What a run of examples shares: the namespace, a scratch directory, a session on it. */
export interface ExampleCtx {
  connect: string;
  cwd: string;
  c: Coordinator;
  engine: Engine;
  /** The environment every example runs with (ZOOTT_CONNECT, ZOOTT_WORLD). */
  env: Record<string, string | undefined>;
}

/** One example: what it needs first, and what it must leave behind. */
export interface ExampleStep {
  before?: (ctx: ExampleCtx) => Promise<void>;
  /** Added to the environment (a variable set to undefined is removed). */
  env?: Record<string, string | undefined>;
  /** For `wait`: the result to publish (again and again) until the example has taken one. */
  publish?: { address: { routingkey: string; exchange?: string }; result: unknown };
  check: (r: RunResult, ctx: ExampleCtx) => Promise<void> | void;
}

/** Runs `example` to its end, publishing the step's result meanwhile when it has one. */
async function runOne(
  step: ExampleStep,
  args: string[],
  ctx: ExampleCtx,
  env: Record<string, string | undefined>,
): Promise<RunResult> {
  const { publish } = step;
  if (!publish) return zoott(args, { env, cwd: ctx.cwd, timeoutMs: 180_000 });
  // `wait` takes a result published after it started: publish until it has one.
  const child = start(args, { env, cwd: ctx.cwd });
  let done = false;
  void child.exited.then(() => (done = true));
  const world = { world: env.ZOOTT_WORLD ?? 'default' };
  await until(async () => {
    if (!done) await publishResult(ctx.c, publish.address, publish.result, world);
    return done;
  }, 'the example to take a published result');
  return child.exited;
}

/**
 * Runs the examples in order, each after its `before`, and checks each; a failure names the
 * example and shows its output. `rewrite` maps a word (e.g. an example's server address).
 */
export async function runExamples(
  steps: Record<string, ExampleStep>,
  ctx: ExampleCtx,
  rewrite: (word: string) => string = (w) => w,
): Promise<void> {
  for (const [example, step] of Object.entries(steps)) {
    await step.before?.(ctx);
    const env = { ...ctx.env, ...step.env };
    const r = await runOne(step, shellWords(example).map(rewrite), ctx, env);
    expect(r.code, `${example}\n${r.stderr}`).toBe(0);
    try {
      await step.check(r, ctx);
    } catch (err) {
      throw new Error(`${example}: ${(err as Error).message}\nstdout:\n${r.stdout}`);
    }
  }
}

/**
 * Claims what is runnable (as worker `as`), settles `key` with `how` and gives the rest back:
 * puts one task in the state an example needs.
 */
export async function settleTask(
  engine: Engine,
  key: readonly string[],
  how: 'complete' | 'fail',
  as = 'examples',
): Promise<void> {
  const claims = await engine.claimMany(32, { worker: as, server: as });
  const mine = claims.find((cl) => cl.key.join('|') === key.join('|'));
  for (const cl of claims) if (cl !== mine) await engine.release(cl);
  if (!mine) throw new Error(`${key.join('|')} was not runnable`);
  if (how === 'complete') await engine.complete(mine, 'done');
  else await engine.fail(mine, new PermanentError('example failure'));
}
