import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/vitest-global-setup.ts'],
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  clean: true,
  dts: false,
  // Docker-only path: loaded at run time when a Docker engine answers, never bundled.
  external: ['testcontainers'],
});
