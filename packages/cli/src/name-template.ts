import type { NameFunctor } from '@zoott/core';
import { compilePattern } from '@zoott/core/internal';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';

const TOKEN = /\{([a-z]+|\d)\}/g;

/**
 * A child-name template as a name functor. Tokens: `{name}` the child's own name,
 * `{parent}` the matched parent's name, `{1}`..`{9}` the capture groups of the parent-name
 * pattern in the parent's name (`{0}` is the whole parent name). For example
 * `--parent-name 'requestFile_(.*)' --child-name 'downloadFile_{1}'` names the child of
 * `requestFile_alpha` `downloadFile_alpha`.
 */
export function templateFunctor(template: string, parentNamePattern?: string): NameFunctor {
  // The engine's own compiler: the same RE2 syntax and limits, and linear-time matching, so
  // extracting the groups of a matched parent cannot stall the CLI either.
  let re: ReturnType<typeof compilePattern> | null = null;
  if (parentNamePattern !== undefined) {
    try {
      re = compilePattern(parentNamePattern, 'parent.name');
    } catch {
      re = null; // the engine reports the bad pattern with its own checks
    }
  }
  for (const match of template.matchAll(TOKEN)) {
    const token = match[1]!;
    if (token !== 'name' && token !== 'parent' && !/^\d$/.test(token))
      throw new CliError(
        `--child-name ${JSON.stringify(template)}: unknown token {${token}}`,
        ExitCode.USAGE,
        'tokens are {name}, {parent} and {0}..{9} (capture groups of --parent-name)',
      );
    if (/^[1-9]$/.test(token) && !re)
      throw new CliError(
        `--child-name: {${token}} needs a --parent-name pattern with capture groups`,
      );
  }
  return (parentName, childName) => {
    const matcher = re?.matcher(parentName) ?? null;
    const matched = matcher?.matches() ?? false;
    return template.replace(TOKEN, (_all, token: string) => {
      if (token === 'name') return childName;
      if (token === 'parent') return parentName;
      const group = Number(token);
      return matched && matcher && group <= matcher.groupCount()
        ? (matcher.group(group) ?? '')
        : '';
    });
  };
}
