import { readFileSync } from 'node:fs';
import { EPHEMERAL_LEVELS, validatePath } from '@zoott/core/internal';
import {
  childrenOf,
  type Hierarchy,
  hierarchyFormatOf,
  initHierarchy,
  parseHierarchyText,
} from '@zoott/core/recipes';
import type { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import { countingCoordinator } from '../counting.js';
import { CliError } from '../errors.js';
import { createProgress } from '../output/progress.js';
import type { CommandBody } from '../runner.js';
import { repeatable, type Verb } from '../verb.js';

interface ImportOptions {
  root?: string;
  user?: string[];
  users?: string;
  update?: boolean;
}

function countNodes(hierarchy: Hierarchy): number {
  return childrenOf(hierarchy).reduce((n, [, child]) => n + 1 + countNodes(child), 0);
}

/**
 * The hierarchy without nodes at zoott's ephemeral places (an export taken by an older
 * zoott, or by hand, while tasks ran): imported, they would become claims and workers that
 * no session owns. Returns the paths (relative to the file's root) that were left out.
 */
function dropEphemeralPlaces(hierarchy: Hierarchy, at = ''): string[] {
  const skipped: string[] = [];
  for (const [name, child] of childrenOf(hierarchy)) {
    const depth = EPHEMERAL_LEVELS[name];
    if (depth !== undefined) skipped.push(...dropBelow(child, depth, `${at}/${name}`));
    else skipped.push(...dropEphemeralPlaces(child, `${at}/${name}`));
  }
  return skipped;
}

function dropBelow(hierarchy: Hierarchy, depth: number, at: string): string[] {
  const skipped: string[] = [];
  for (const [name, child] of childrenOf(hierarchy)) {
    if (depth === 1) {
      delete hierarchy[name];
      skipped.push(`${at}/${name}`);
    } else skipped.push(...dropBelow(child, depth - 1, `${at}/${name}`));
  }
  return skipped;
}

/** Passwords of the digest users named in `__acl__`: `--users file` then `--user name:pw`. */
function readUsers(opts: ImportOptions): Record<string, string> {
  const users: Record<string, string> = {};
  if (opts.users) {
    const value: unknown = parseYaml(readFileSync(opts.users, 'utf8'));
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new CliError(
        `--users ${opts.users}: must map user names to passwords, e.g. {xp: "123"}`,
      );
    for (const [key, property] of Object.entries(value)) {
      if (typeof property !== 'string' && typeof property !== 'number')
        throw new CliError(`--users ${opts.users}: the password of ${key} must be a string`);
      users[key] = String(property);
    }
  }
  for (const user of opts.user ?? []) {
    const colon = user.indexOf(':');
    if (colon <= 0) throw new CliError(`--user ${JSON.stringify(user)}: expected name:password`);
    users[user.slice(0, colon)] = user.slice(colon + 1);
  }
  return users;
}

/**
 * `zoott import <file> [--root /path] [--user name:password]...`: creates the hierarchy of
 * a YAML or JSON file (zkutil's format: `__val__`, `__acl__`, children). Digest users in
 * `__acl__` need their passwords (`--user`, `--users`).
 */
const importCommand: CommandBody = async (ctx, cmd: Command) => {
  const [file] = cmd.processedArgs as [string];
  const opts = cmd.opts<ImportOptions>();
  const format = hierarchyFormatOf(file);
  if (!format) throw new CliError(`${file}: the file name must end in .yaml, .yml or .json`);
  const root = opts.root ?? '/';
  try {
    validatePath(root);
  } catch (err) {
    throw new CliError(`--root: ${(err as Error).message}`);
  }
  const tree = parseHierarchyText(readFileSync(file, 'utf8'), format, file);
  const skipped = dropEphemeralPlaces(tree);
  if (skipped.length > 0 && !ctx.json)
    ctx.note(
      `skipping ${skipped.length} node(s) at zoott's ephemeral places (claims, worker registrations): ${skipped.slice(0, 5).join(', ')}${skipped.length > 5 ? ', ...' : ''}`,
    );
  const users = readUsers(opts);
  const total = countNodes(tree);
  const progress = createProgress({ label: `importing ${file}`, total });
  let done = 0;
  // Each node is checked with `exists` before it is created or updated: count those.
  const zk = countingCoordinator(await ctx.session().coordinator(), ['exists'], () =>
    progress.update(Math.min(++done, total)),
  );
  const { created, existing } = await initHierarchy(zk, tree, users, null, {
    root,
    updateExisting: opts.update === true,
  });
  progress.finish();
  if (ctx.json) ctx.printJson({ file, root, nodes: total, created, existing, skipped });
  else
    ctx.out(
      `imported ${total} node(s) from ${file} under ${root}: ${created} created, ${existing} already present${existing > 0 ? (opts.update ? ' (values updated)' : ' (values kept; --update overwrites them)') : ''}`,
    );
};

export const importVerb: Verb = {
  define: (program) =>
    program
      .command('import')
      .argument('<file>', 'a .yaml/.yml/.json hierarchy')
      .description('create the nodes of a hierarchy file')
      .option('--root <path>', 'create the top-level names under this path (default /)')
      .option(
        '--user <name:password>',
        'password of a digest user named in __acl__ (repeatable)',
        repeatable,
      )
      .option('--users <file>', 'YAML/JSON map of user names to passwords')
      .option('--update', 'also overwrite the values of nodes that exist'),
  examples: ['zoott import myapp.yaml --root /copy --user xp:123'],
  run: importCommand,
};
