import { packageBuild } from '../../tsup.shared.js';

export default packageBuild([], {
  entry: {
    index: 'src/index.ts',
    bin: 'src/bin.ts',
    // Loaded by `zoott-worker --handlers` in `zoott demo --connect` (see demo/worker-processes.ts).
    'demo-handlers': 'src/demo/handlers-module.ts',
  },
  // dist/bin.js is the `zoott` executable; a hashbang is harmless in the library entry.
  banner: { js: '#!/usr/bin/env node' },
});
