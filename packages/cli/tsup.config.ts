import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    bin: 'src/bin.ts',
    // Loaded by `zoott-worker --handlers` in `zoott demo --connect` (see demo/worker-processes.ts).
    'demo-handlers': 'src/demo/handlers-module.ts',
  },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  // Only tsup's own output: a full clean would also delete the .d.ts files that
  // `tsc --build` emitted, while its .tsbuildinfo survives and says they are up to date.
  clean: ['!**/*.d.ts', '!**/*.d.ts.map'],
  dts: false,
  // dist/bin.js is the `zoott` executable; a hashbang is harmless in the library entry.
  banner: { js: '#!/usr/bin/env node' },
});
