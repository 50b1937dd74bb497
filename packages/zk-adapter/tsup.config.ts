import { packageBuild } from '../../tsup.shared.js';

export default packageBuild(['src/index.ts'], {
  // The patched node-zookeeper-client goes INTO dist: a pnpm patch applies only inside this
  // workspace, so depending on the registry's copy would ship a client without the fixes (a
  // multi checking a stale version 0 would succeed). Its own dependencies (async, underscore)
  // stay external, declared in package.json with the library's own ranges.
  noExternal: ['node-zookeeper-client'],
  // The bundled library is CommonJS: its require() of Node built-ins and of async/underscore
  // needs a real require in an ES module.
  banner: {
    js: "import { createRequire as __zoottCreateRequire } from 'node:module';\nconst require = __zoottCreateRequire(import.meta.url);",
  },
});
