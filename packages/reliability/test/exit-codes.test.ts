/**
 * The one exit-code table of `zoott`, `zoott-worker` and `zoott-amqp-bridge`
 * (packages/jobs/src/exit-codes.ts): one meaning per code, and each program's `--help` (the
 * built binary, as a user runs it) and README list exactly the codes it ends with.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  ChildExitCode,
  EXIT_CODES,
  ExitCode,
  exitCodesHelp,
  exitCodesOf,
  type ProgramName,
} from '@zoott/jobs/config';
import { describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

const PROGRAMS: Record<ProgramName, { bin: string; readme: string }> = {
  zoott: { bin: 'packages/cli/dist/bin.js', readme: 'packages/cli/README.md' },
  'zoott-worker': { bin: 'apps/worker/dist/bin.js', readme: 'apps/worker/README.md' },
  'zoott-amqp-bridge': {
    bin: 'apps/amqp-bridge/dist/bin.js',
    readme: 'apps/amqp-bridge/README.md',
  },
};

/** The codes a README's exit-code table lists (`| <code> |` rows; `128+n` as 128). */
function readmeCodes(text: string): number[] {
  const table = text.slice(text.indexOf('| code | meaning |'));
  const rows = table.split('\n').slice(2);
  const codes: number[] = [];
  for (const row of rows) {
    const match = /^\s*\| (\d+)(\+n)? \|/.exec(row);
    if (!match) break;
    codes.push(Number(match[1]));
  }
  return codes;
}

describe('exit codes', () => {
  it('one meaning per code, every name a row', () => {
    const codes = EXIT_CODES.map((row) => row.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of [...Object.values(ExitCode), ...Object.values(ChildExitCode)])
      expect(codes).toContain(code);
    // The bridge's RabbitMQ failures are not the codes the other programs give ZooKeeper's.
    expect([ExitCode.AUTH, ExitCode.NOT_FOUND]).not.toContain(ExitCode.AMQP_TLS);
    expect([ExitCode.AUTH, ExitCode.NOT_FOUND]).not.toContain(ExitCode.AMQP_ACCESS);
  });

  for (const [program, { bin, readme }] of Object.entries(PROGRAMS) as [
    ProgramName,
    { bin: string; readme: string },
  ][]) {
    it(`${program}: --help prints its rows of the table`, async () => {
      if (!existsSync(repo(bin))) throw new Error(`${bin} is missing: run \`pnpm build\` first`);
      const { stdout } = await exec(process.execPath, [repo(bin), '--help']);
      expect(stdout).toContain(exitCodesHelp(program));
    });

    it(`${program}: the README's exit-code table lists the same codes`, () => {
      const listed = readmeCodes(readFileSync(repo(readme), 'utf8'));
      const own = exitCodesOf(program)
        .map((row) => row.code)
        // The child's codes are passed on by `lock` and `submit --wait`, explained below it.
        .filter(
          (code) => code !== ChildExitCode.CANNOT_EXECUTE && code !== ChildExitCode.NOT_FOUND,
        );
      expect([...listed].sort((a, b) => a - b)).toEqual([...own].sort((a, b) => a - b));
    });
  }
});
