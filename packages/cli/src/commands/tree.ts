import type { TreeNode } from '@zoott/core';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { countTree, renderTree, treeToJson } from '../output/tree.js';
import type { CommandBody } from '../runner.js';
import { parseTaskRef, showKey } from '../task-ref.js';
import type { Verb } from '../verb.js';

/**
 * `zoott tree [task]`: the task tree, or one task with its subtree, with each node's state.
 * A tree node that cannot be read is drawn (marked corrupt) and reported; exit 9 only when
 * it is the task asked about.
 */
const treeCommand: CommandBody = async (ctx, cmd: Command) => {
  const [ref] = cmd.processedArgs as [string | undefined];
  const root = ref === undefined ? undefined : parseTaskRef(ref);
  const engine = await ctx.session().engine();
  let nodes: TreeNode[];
  let code: number = ExitCode.OK;
  if (root === undefined) nodes = await engine.tree();
  else {
    const [rec, below] = await Promise.all([engine.task(root), engine.tree(root)]);
    if (!rec)
      throw new CliError(
        `no task ${showKey(root)} in world ${engine.world}`,
        ExitCode.NOT_FOUND,
        '`zoott tree` shows the tasks there are; refer to one as a|b|c or a/b/c',
      );
    const top: TreeNode = {
      key: rec.key,
      name: rec.name,
      type: rec.type,
      state: rec.state,
      children: below,
    };
    const treePath = (await engine.context()).layout.treePath(root);
    const treeBad = rec.corrupt?.find((n) => n.path === treePath);
    if (treeBad) top.corrupt = treeBad.reason;
    // Any of the task's own nodes (tree node, entry, records) being unreadable counts.
    if (rec.corrupt) code = ExitCode.CORRUPT;
    nodes = [top];
  }
  if (ctx.json) {
    ctx.printJson({ world: engine.world, tasks: treeToJson(nodes), corrupt: ctx.corrupt.list() });
    return code;
  }
  ctx.out(renderTree(engine.world, nodes, ctx.colors));
  const counts = countTree(nodes);
  const parts = ['pending', 'working', 'completed', 'failed', 'cancelled']
    .filter((s) => counts[s])
    .map((s) => `${counts[s]} ${s}`);
  if (parts.length > 0) ctx.out(ctx.colors.dim(parts.join(', ')));
  return code;
};

export const treeVerb: Verb = {
  define: (program) =>
    program
      .command('tree')
      .argument('[task]', 'only this subtree')
      .description("the task tree with each task's state"),
  examples: ['zoott --world files tree', 'zoott tree requestFile_a'],
  run: treeCommand,
};
