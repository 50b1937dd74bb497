export { buildProgram, main, VERSION } from './cli.js';
export { type ConfigFile, loadConfig, parseConfig } from './config.js';
export {
  DEFAULT_CONNECT,
  DEFAULT_WORLD,
  type GlobalOptions,
  openZk,
  resolveSettings,
  type Settings,
  splitChroot,
} from './connection.js';
export { CliError, explain } from './errors.js';
export { ExitCode } from './exit-codes.js';
export { templateFunctor } from './name-template.js';
export { parseTaskRef } from './task-ref.js';
