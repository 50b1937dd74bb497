import { buildProgram } from '../src/cli.js';
import { type RunResult, zoott } from './helpers.js';

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

/**
 * Splits a command line as a POSIX shell would for the words the examples use: single and
 * double quotes, and a trailing `# comment`. Anything that needs a real shell (a pipe, `$(`)
 * is refused, so such an example cannot be run half-way by accident.
 */
export function shellWords(line: string): string[] {
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
  if (words[0] !== 'zoott') throw new Error(`not a zoott command: ${line}`);
  return words.slice(1);
}
