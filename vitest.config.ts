import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));

// Tests import workspace packages from source, so an edit is picked up without a rebuild.
// Subprocess tests (CLI, worker daemon) still run the built dist, which `pnpm test` builds first.
export default defineConfig({
  resolve: {
    alias: {
      // Subpaths before the bare name: an alias also matches `<name>/<anything>`.
      '@zoott/core/internal': src('./packages/core/src/internal.ts'),
      '@zoott/core/recipes': src('./packages/core/src/recipes.ts'),
      '@zoott/core/jobs': src('./packages/core/src/jobs.ts'),
      '@zoott/core/admin': src('./packages/core/src/admin.ts'),
      '@zoott/core': src('./packages/core/src/index.ts'),
      '@zoott/memory-adapter': src('./packages/memory-adapter/src/index.ts'),
      '@zoott/zk-adapter/recipes': src('./packages/zk-adapter/src/recipes.ts'),
      '@zoott/zk-adapter': src('./packages/zk-adapter/src/index.ts'),
      '@zoott/conformance': src('./packages/conformance/src/index.ts'),
      '@zoott/zk-testkit': src('./packages/zk-testkit/src/index.ts'),
      // Before '@zoott/jobs', which would otherwise match them as a prefix.
      '@zoott/jobs/config': src('./packages/jobs/src/config.ts'),
      '@zoott/jobs/internal': src('./packages/jobs/src/internal.ts'),
      '@zoott/jobs': src('./packages/jobs/src/index.ts'),
      '@zoott/rabbitmq-testkit': src('./packages/rabbitmq-testkit/src/index.ts'),
      '@zoott/amqp-bridge': src('./packages/amqp-bridge/src/index.ts'),
      '@zoott/testing': src('./packages/testing/src/index.ts'),
      '@zoott/cli': src('./packages/cli/src/index.ts'),
      '@zoott/dashboard': src('./packages/dashboard/src/index.ts'),
      '@zoott/otel/sdk': src('./packages/otel/src/sdk.ts'),
      '@zoott/otel': src('./packages/otel/src/index.ts'),
    },
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts'],
    // One standalone ZooKeeper for the whole run (inject('zkConnect')); fails the run if none.
    globalSetup: ['./packages/zk-testkit/src/vitest-global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // ZooKeeper-backed files each start their own server; two cores only.
    maxWorkers: 2,
    // .ci/run reads the JSON report to print the closing `N passed, N failed` line.
    reporters: process.env.ZOOTT_TEST_REPORT
      ? ['default', ['json', { outputFile: process.env.ZOOTT_TEST_REPORT }]]
      : ['default'],
  },
});
