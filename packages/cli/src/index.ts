// @zoott/cli is the `zoott` command. As a library it offers only what embeds the command in
// another program: its commander program, its entry point, its version and its exit codes.
// Everything else (settings, connections, output) is the command's own and may change.
export { buildProgram, main, VERSION } from './cli.js';
export { ExitCode } from './exit-codes.js';
