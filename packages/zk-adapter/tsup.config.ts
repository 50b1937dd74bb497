import { copyFile, mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { packageBuild } from '../../tsup.shared.js';

const require = createRequire(import.meta.url);
/** Where the bundled library's licence and zoott's changes to it go in the tarball. */
const THIRD_PARTY = 'dist/third-party/node-zookeeper-client';

export default packageBuild(['src/index.ts', 'src/recipes.ts'], {
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
  // Its MIT licence must travel with the code, and so does the exact patch applied to it
  // (THIRD_PARTY_NOTICES.md lists the changes in words). Copied at build time from the
  // installed library and from patches/, so the repository keeps one copy of each.
  async onSuccess() {
    const library = path.dirname(require.resolve('node-zookeeper-client/package.json'));
    await mkdir(THIRD_PARTY, { recursive: true });
    await copyFile(path.join(library, 'LICENSE'), `${THIRD_PARTY}/LICENSE`);
    await copyFile(
      '../../patches/node-zookeeper-client@1.1.3.patch',
      `${THIRD_PARTY}/zoott-fixes.patch`,
    );
  },
});
