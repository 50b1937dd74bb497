import { writeFileSync } from 'node:fs';
import { isZoottError } from '@zoott/core';
import { validatePath } from '@zoott/core/internal';
import { exportHierarchy, formatHierarchy, hierarchyFormatOf } from '@zoott/core/recipes';
import type { Command } from 'commander';
import { countingCoordinator } from '../counting.js';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { createProgress } from '../output/progress.js';
import type { CommandBody } from '../runner.js';
import type { Verb } from '../verb.js';

interface ExportOptions {
  output?: string;
}

/**
 * `zoott export <path> [-o file.yaml|file.json]`: the subtree in the hierarchy format
 * (`__val__`, `__acl__`, children). Without -o it goes to stdout, YAML (JSON with --json).
 */
const exportCommand: CommandBody = async (ctx, cmd: Command) => {
  const [path] = cmd.processedArgs as [string];
  const out = cmd.opts<ExportOptions>().output;
  try {
    validatePath(path);
  } catch (err) {
    throw new CliError(
      `${(err as Error).message}`,
      ExitCode.USAGE,
      'give an absolute node path, e.g. zoott export /myapp',
    );
  }
  const format = out ? hierarchyFormatOf(out) : ctx.json ? 'json' : 'yaml';
  if (!format) throw new CliError(`-o ${out}: the file name must end in .yaml, .yml or .json`);
  const progress = createProgress({
    label: `exporting ${path}`,
    silent: !out && process.stderr.isTTY !== true,
  });
  let nodes = 0;
  const zk = countingCoordinator(await ctx.session().coordinator(), ['get'], () =>
    progress.update(++nodes, undefined, 'nodes'),
  );
  const tree = await exportHierarchy(zk, path).catch(async (err: unknown) => {
    if (!isZoottError(err, 'NO_NODE') || err.path !== (path.replace(/(.)\/+$/, '$1') || '/'))
      throw err;
    // The path is missing. Below a missing chroot every path is: say which it is.
    const chrootMissing = (await zk.exists('/').catch(() => null)) === null;
    const at = ctx.settings.connect ? ` at ${ctx.settings.connect}` : '';
    throw new CliError(
      `no node ${path}${at}`,
      ExitCode.NOT_FOUND,
      chrootMissing
        ? 'the chroot of the connect string does not exist (`zoott init` creates it)'
        : 'check the path: it is absolute, and relative to the chroot of the connect string if it has one (`zoott export /` shows everything there)',
    );
  });
  progress.finish();
  const text = formatHierarchy(tree, format);
  if (!out) {
    process.stdout.write(text);
    return;
  }
  writeFileSync(out, text);
  if (ctx.json) ctx.printJson({ path, file: out, format, nodes });
  else ctx.out(`exported ${nodes} node(s) under ${path} to ${out}`);
};

export const exportVerb: Verb = {
  define: (program) =>
    program
      .command('export')
      .argument('<path>', 'node path to export')
      .description('export a subtree (hierarchy format: __val__, __acl__, children)')
      .option('-o, --output <file>', 'write to file.yaml / file.json instead of stdout'),
  examples: ['zoott export /myapp -o myapp.yaml'],
  run: exportCommand,
};
