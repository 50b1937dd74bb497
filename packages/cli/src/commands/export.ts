import { writeFileSync } from 'node:fs';
import { validatePath } from '@zoott/core/internal';
import { exportHierarchy, formatHierarchy, hierarchyFormatOf } from '@zoott/core/recipes';
import type { Command } from 'commander';
import { countingCoordinator } from '../counting.js';
import { CliError } from '../errors.js';
import { createProgress } from '../output/progress.js';
import type { CommandBody } from '../runner.js';

interface ExportOptions {
  output?: string;
}

/**
 * `zoott export <path> [-o file.yaml|file.json]`: the subtree in the hierarchy format
 * (`__val__`, `__acl__`, children). Without -o it goes to stdout, YAML (JSON with --json).
 */
export const exportCommand: CommandBody = async (ctx, cmd: Command) => {
  const [path] = cmd.processedArgs as [string];
  const out = cmd.opts<ExportOptions>().output;
  try {
    validatePath(path);
  } catch (err) {
    throw new CliError(
      `${(err as Error).message}`,
      2,
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
  const tree = await exportHierarchy(zk, path);
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
