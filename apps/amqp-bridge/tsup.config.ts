import { packageBuild } from '../../tsup.shared.js';

export default packageBuild(['src/bin.ts'], {
  banner: { js: '#!/usr/bin/env node' },
});
