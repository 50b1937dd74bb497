import { packageBuild } from '../../tsup.shared.js';

export default packageBuild(['src/index.ts', 'src/bin.ts'], {
  // Only the bin is run directly; a shebang in index.js is harmless.
  banner: { js: '#!/usr/bin/env node' },
});
