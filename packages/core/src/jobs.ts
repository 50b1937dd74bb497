// `@zoott/core/jobs`: Yothalot JSON jobs, the data of the worker daemon's built-in
// `zoott.job` and `zoott.race` tasks: validation, result shapes and output caps.
// See src/jobs/README.md.
export * from './jobs/index.js';
