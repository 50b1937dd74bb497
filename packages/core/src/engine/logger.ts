import type { EngineLogger } from './types.js';

/** Writes warnings and errors to the console; the default when no logger is given. */
export const consoleLogger: EngineLogger = {
  warn: (fields, msg) => console.warn(`[zoott] ${msg}`, fields),
  error: (fields, msg) => console.error(`[zoott] ${msg}`, fields),
};
