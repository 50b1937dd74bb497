import { packageBuild } from '../../tsup.shared.js';

// The program only: the daemon and the job layer it runs are @zoott/jobs.
export default packageBuild(['src/bin.ts'], {
  banner: { js: '#!/usr/bin/env node' },
});
