// pnpm hooks for this workspace.
//
// beforePacking: what `pnpm pack` and `pnpm publish` put in a tarball's package.json. A
// published manifest's devDependencies serve nobody (they are never installed from a
// registry) and here they name the workspace's private test packages (@zoott/testing, ...),
// which exist on no registry: they are left out.
module.exports = {
  hooks: {
    beforePacking(manifest) {
      delete manifest.devDependencies;
      return manifest;
    },
  },
};
