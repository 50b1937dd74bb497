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
export function paintState(c: Colors, state: TaskStateName | null): string {
  switch (state) {
    case 'completed':
      return c.green(state);
    case 'working':
      return c.yellow(state);
    case 'failed':
      return c.red(state);
    case 'pending':
      return c.dim(state);
    default:
      return c.dim('cancelled');
  }
}
