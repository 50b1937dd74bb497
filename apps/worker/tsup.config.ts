import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/bin.ts'],
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  // Keep the .d.ts files on clean (tsup reads these globs as exceptions): they come from
  // `tsc --build`, whose incremental state (dist/.tsbuildinfo survives a clean) would call
  // them up to date after tsup deleted them.
  clean: ['!**/*.d.ts', '!**/*.d.ts.map'],
  dts: false,
  // Only the bin is run directly; a shebang in index.js is harmless.
  banner: { js: '#!/usr/bin/env node' },
});
