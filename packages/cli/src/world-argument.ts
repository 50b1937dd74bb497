import type { Command } from 'commander';
import { CliError } from './errors.js';

/**
 * The `<world>` argument of a verb that acts on one user world, checked before anything is
 * read or written: a user world may not take an internal world's name (they hold race
 * coordinators), and a bad name is a usage error saying what is wrong with it.
 */
export async function userWorldArgument(cmd: Command): Promise<string> {
  const [world] = cmd.processedArgs as [string];
  const { validateUserWorldName } = await import('@zoott/core/internal');
  try {
    validateUserWorldName(world);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  return world;
}
