import { defineConfig, type Options } from 'tsup';

/**
 * The one build shape of every zoott package: ESM for Node 20 with source maps. Declarations
 * come from `tsc --build` (project references), not from tsup, so they stay consistent across
 * packages.
 */
export function packageBuild(entry: Options['entry'], extra: Options = {}) {
  return defineConfig({
    entry,
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    sourcemap: true,
    // Keep the declarations tsc --build wrote: its .tsbuildinfo would otherwise claim they exist.
    clean: ['!**/*.d.ts'],
    dts: false,
    ...extra,
  });
}
