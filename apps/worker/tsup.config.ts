import { packageBuild } from '../../tsup.shared.js';

// src/config.ts is an entry of its own (`@zoott/worker/config`): the CLI reads the shared
// config file through it without loading the daemon.
export default packageBuild(['src/index.ts', 'src/bin.ts', 'src/config.ts'], {
  // Only the bin is run directly; a shebang in index.js is harmless.
  banner: { js: '#!/usr/bin/env node' },
});
