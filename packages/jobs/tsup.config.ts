import { packageBuild } from '../../tsup.shared.js';

// src/config.ts is an entry of its own (`@zoott/jobs/config`): the CLI and zoott-worker read
// the shared config file through it without loading the daemon. src/internal.ts
// (`@zoott/jobs/internal`) holds the pieces, for the worker program's tests and tools.
export default packageBuild(['src/index.ts', 'src/config.ts', 'src/internal.ts']);
