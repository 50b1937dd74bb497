import type { TaskStateName } from '@zoott/core';
import pc from 'picocolors';

/** Colour functions; identity functions when colour is off. */
export type Colors = ReturnType<typeof pc.createColors>;

/**
 * Colour only on a terminal: never when piped or in --json mode, never with NO_COLOR,
 * always with FORCE_COLOR (so snapshot tests can look at the coloured form too).
 */
export function colorsFor(
  stream: NodeJS.WriteStream,
  env: NodeJS.ProcessEnv = process.env,
): Colors {
  const on = env.FORCE_COLOR
    ? env.FORCE_COLOR !== '0'
    : !env.NO_COLOR && stream.isTTY === true && env.TERM !== 'dumb';
  return pc.createColors(on);
}

/** Paints a task state: green done, yellow working, red failed, dim pending. */
export function paintState(colours: Colors, state: TaskStateName | null): string {
  switch (state) {
    case 'completed':
      return colours.green(state);
    case 'working':
      return colours.yellow(state);
    case 'failed':
      return colours.red(state);
    case 'pending':
      return colours.dim(state);
    default:
      return colours.dim('cancelled');
  }
}
