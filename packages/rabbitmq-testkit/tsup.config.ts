import { packageBuild } from '../../tsup.shared.js';

export default packageBuild(['src/index.ts'], {
  // Docker-only path: loaded at run time when a Docker engine answers, never bundled.
  external: ['testcontainers'],
});
