import { defineConfig, type Options } from 'tsup';

/** The browser app: one IIFE script plus the CSS it imports, which the server reads at start. */
const client = (outDir: string): Options => ({
  entry: { app: 'src/client/main.ts' },
  outDir,
  format: ['iife'],
  target: 'es2022',
  platform: 'browser',
  minify: true,
  sourcemap: false,
  clean: false,
  dts: false,
  outExtension: () => ({ js: '.js' }),
});

// Tests build the page alone into a folder of their own (ZOOTT_DASHBOARD_ASSETS_OUT), so two
// test files building at once never read each other's half-written bundle.
const testOut = process.env.ZOOTT_DASHBOARD_ASSETS_OUT;

// Neither build cleans dist: both write into it at once, and `tsc --build` puts its
// declarations there too.
export default testOut
  ? defineConfig(client(testOut))
  : defineConfig([
      {
        entry: ['src/index.ts'],
        format: ['esm'],
        target: 'node20',
        platform: 'node',
        sourcemap: true,
        clean: false,
        dts: false,
      },
      client('dist/public'),
    ]);
