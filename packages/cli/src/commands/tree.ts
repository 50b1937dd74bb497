import type { Command } from 'commander';
import { countTree, renderTree, treeToJson } from '../output/tree.js';
import type { CommandBody } from '../runner.js';
import { parseTaskRef } from '../task-ref.js';

/** `zoott tree [task]`: the task tree (or one subtree) with each node's state. */
export const treeCommand: CommandBody = async (ctx, cmd: Command) => {
  const [ref] = cmd.processedArgs as [string | undefined];
  const root = ref === undefined ? undefined : parseTaskRef(ref);
  const engine = await ctx.session().engine();
  const nodes = await engine.tree(root);
  if (ctx.json) {
    ctx.printJson({ world: engine.world, tasks: treeToJson(nodes) });
    return;
  }
  ctx.out(renderTree(engine.world, nodes, ctx.colors));
  const counts = countTree(nodes);
  const parts = ['pending', 'working', 'completed', 'failed', 'cancelled']
    .filter((s) => counts[s])
    .map((s) => `${counts[s]} ${s}`);
  if (parts.length > 0) ctx.out(ctx.colors.dim(parts.join(', ')));
};
