/**
 * zoott's layer rules, checked by dependency-cruiser (`pnpm depcruise`, part of `pnpm test`).
 * CONTRIBUTING.md explains the layers. Imports of `@zoott/*` are resolved the way Node resolves
 * them (through each package's node_modules to the built dist), so a package that does not
 * declare a workspace package it imports fails `not-to-unresolvable`; run after `pnpm build`.
 */

/** The Coordinator adapters: each stands on core alone. */
const ADAPTERS = '(memory-adapter|zk-adapter)';
/** Support for tests only; never part of a shipped program. */
const TEST_SUPPORT = '(testing|zk-testkit|rabbitmq-testkit|conformance)';
/**
 * core's wings, bottom to top: contract <- tree <- engine <- claim <- front <- schedules,
 * rate-limits, retention <- worker <- admin (recipes on the contract alone; jobs on contract
 * and tree). Each imports only what stands below it; the faces at src/ root re-export them.
 */
const WING = (names) => `^packages/core/src/(${names})/`;
/** Source that ships: everything under a src/ folder except the test-support packages. */
const SHIPPED_SRC = `^(packages/(core|${ADAPTERS.slice(1, -1)}|cli|jobs|dashboard|amqp-bridge|otel)|apps/[^/]+)/src/`;

module.exports = {
  forbidden: [
    {
      name: 'core-imports-no-package',
      comment:
        'core is the bottom layer: the contract, the model, the engine and the recipes. It imports no other workspace package (no adapter, no test support, no app).',
      severity: 'error',
      from: { path: '^packages/core/src/' },
      to: { path: '^(packages|apps)/', pathNot: '^packages/core/' },
    },
    {
      name: 'core-imports-no-io',
      comment:
        'core talks to ZooKeeper only through the Coordinator contract, so it runs unchanged on any adapter: no ZooKeeper client, no processes, sockets, files or HTTP.',
      severity: 'error',
      from: { path: '^packages/core/src/' },
      to: {
        path: '^(node-zookeeper-client|zookeeper|(node:)?(child_process|net|tls|dgram|fs|fs/promises|http|https|http2))$',
      },
    },
    {
      name: 'core-contract-imports-nothing-of-core',
      comment:
        'The Coordinator contract is the ground floor of core: it imports no other part of core.',
      severity: 'error',
      from: { path: WING('contract') },
      to: { path: '^packages/core/src/', pathNot: WING('contract') },
    },
    {
      name: 'core-tree-imports-contract-only',
      comment:
        'The task model (keys, names, patterns, claim order of hints) knows the contract and nothing of how tasks are stored or claimed.',
      severity: 'error',
      from: { path: WING('tree') },
      to: { path: '^packages/core/src/', pathNot: WING('contract|tree') },
    },
    {
      name: 'core-recipes-import-contract-only',
      comment:
        "A recipe (zkutil's helpers) stands on the Coordinator contract alone, so any program can use one without the engine.",
      severity: 'error',
      from: { path: WING('recipes') },
      to: { path: '^packages/core/src/', pathNot: WING('contract|recipes') },
    },
    {
      name: 'core-jobs-import-contract-and-tree',
      comment:
        'The Yothalot job shapes (@zoott/core/jobs) are data: validation and results, on the contract and the task model only.',
      severity: 'error',
      from: { path: WING('jobs') },
      to: { path: '^packages/core/src/', pathNot: WING('contract|tree|jobs') },
    },
    {
      name: 'core-engine-imports-no-wing-above',
      comment:
        'engine/ (layout, queue, settle, events, inspection, the shared context) is what the wings stand on: it imports the contract and the task model, never a wing above it, a recipe or the job shapes.',
      severity: 'error',
      from: { path: WING('engine') },
      to: {
        path: WING('claim|front|schedules|rate-limits|retention|worker|admin|recipes|jobs'),
      },
    },
    {
      name: 'core-claim-imports-engine-and-below',
      comment:
        'The claim path (listings, bucket state, candidates, claims, hand-off) stands on the engine; the Engine class, the background jobs, the worker and admin stand on it.',
      severity: 'error',
      from: { path: WING('claim') },
      to: { path: WING('front|schedules|rate-limits|retention|worker|admin|recipes|jobs') },
    },
    {
      name: 'core-front-imports-claim-and-below',
      comment:
        'front/ holds the Engine class, the engine and the claim path behind one API; what runs beside a worker (schedules, limits, retention) uses it, never the other way.',
      severity: 'error',
      from: { path: WING('front') },
      to: { path: WING('schedules|rate-limits|retention|worker|admin|recipes|jobs') },
    },
    {
      name: 'core-background-jobs-import-no-worker-or-admin',
      comment:
        'Schedules, rate limits and retention are the background jobs every worker runs: they stand below the worker and admin.',
      severity: 'error',
      from: { path: WING('schedules|rate-limits|retention') },
      to: { path: WING('worker|admin|jobs') },
    },
    {
      name: 'core-background-jobs-import-no-sibling',
      comment:
        'Schedules, rate limits and retention are independent of each other; what two of them share lives in the engine.',
      severity: 'error',
      from: { path: WING('schedules|rate-limits|retention') },
      to: { path: WING('schedules|rate-limits|retention'), pathNot: '^packages/core/src/$1/' },
    },
    {
      name: 'core-worker-imports-no-admin',
      comment:
        'The worker runs tasks; the doctor, world ACLs and the list of worlds stand above it, not the other way.',
      severity: 'error',
      from: { path: WING('worker') },
      to: { path: WING('admin|jobs') },
    },
    {
      name: 'core-claim-enters-by-the-claimer',
      comment:
        "The claim path's state (the listings, each bucket's state, candidates, guards, recovery) is written by the claim path alone: outside claim/, a file may import only the Claimer (claimer.ts: the claimer, its options and gate) and the completion's bookkeeping (late-children.ts).",
      severity: 'error',
      from: { path: '^packages/core/src/', pathNot: WING('claim') },
      to: {
        path: WING('claim'),
        pathNot: '^packages/core/src/claim/(claimer|late-children)\\.ts$',
      },
    },
    {
      name: 'core-wings-import-no-face',
      comment:
        'The files at src/ root (index, internal, admin, recipes, jobs) are faces: they re-export the wings, and no wing imports a face (version.ts is a value, not a face).',
      severity: 'error',
      from: { path: '^packages/core/src/[^/]+/' },
      to: { path: '^packages/core/src/[^/]+\\.ts$', pathNot: '^packages/core/src/version\\.ts$' },
    },
    {
      name: 'adapters-import-core-only',
      comment:
        'An adapter implements the contract from core and stands on core alone: never on another adapter, test support or an app.',
      severity: 'error',
      from: { path: `^packages/${ADAPTERS}/src/` },
      to: { path: '^(packages|apps)/', pathNot: '^packages/($1|core)/' },
    },
    {
      name: 'zk-adapter-reaches-the-library-through-zk-wire',
      comment:
        'What the ZooKeeper adapter changes in node-zookeeper-client at run time lives in src/zk-wire/, beside the patch it extends: the rest of the adapter drives the client through it and imports no part of the library itself.',
      severity: 'error',
      from: { path: '^packages/zk-adapter/src/', pathNot: '^packages/zk-adapter/src/zk-wire/' },
      to: { path: 'node-zookeeper-client' },
    },
    {
      name: 'otel-imports-core-only',
      comment:
        "The tracing hook's OpenTelemetry side stands on core (and the OpenTelemetry packages) alone: any program or library that traces can take it without the job layer or an adapter.",
      severity: 'error',
      from: { path: '^packages/otel/src/' },
      to: { path: '^(packages|apps)/', pathNot: '^packages/(otel|core)/' },
    },
    {
      name: 'conformance-imports-core-types-only',
      comment:
        'The conformance suite judges adapters against ZooKeeper behaviour; it must not compute what it expects with the code under test, so it may import the contract types of core and nothing else from the workspace.',
      severity: 'error',
      from: { path: '^packages/conformance/src/' },
      to: {
        path: '^(packages|apps)/',
        pathNot: '^packages/conformance/',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'conformance-imports-core-only',
      comment: 'Not even the types of an adapter: the suite states the contract, not an adapter.',
      severity: 'error',
      from: { path: '^packages/conformance/src/' },
      to: { path: '^(packages|apps)/', pathNot: '^packages/(conformance|core)/' },
    },
    {
      name: 'packages-import-no-app',
      comment:
        'apps/ are leaves: programs (bin and argument handling) built from the packages. No package, nor its tests, imports an app.',
      severity: 'error',
      from: { path: '^packages/' },
      to: { path: '^apps/' },
    },
    {
      name: 'apps-import-no-app',
      comment: 'An app does not import another app.',
      severity: 'error',
      from: { path: '^apps/([^/]+)/' },
      to: { path: '^apps/', pathNot: '^apps/$1/' },
    },
    {
      name: 'shipped-code-imports-no-test-support',
      comment:
        'The test-support packages (testing, zk-testkit, conformance) are for tests; code that ships does not import them.',
      severity: 'error',
      from: { path: SHIPPED_SRC },
      to: { path: `^packages/${TEST_SUPPORT}/` },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles: every module can be read (and tested) after what it imports.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment:
        "Every import resolves. For a workspace package this also means the importing package's package.json declares it (pnpm links only what is declared).",
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-non-package-json',
      comment:
        "Every package a file imports is declared in the package.json closest to it (dependencies for src/, devDependencies are enough for tests), not found by accident in the root's node_modules.",
      severity: 'error',
      from: {},
      // dependency-cruiser also reports 'npm-no-pkg' for a package named in peerDependenciesMeta,
      // so a package that is declared as well is not a violation.
      to: {
        dependencyTypes: ['npm-no-pkg', 'npm-unknown'],
        dependencyTypesNot: ['npm', 'npm-dev', 'npm-peer', 'npm-optional'],
      },
    },
    {
      name: 'shipped-code-imports-no-dev-dependency',
      comment:
        'Code that ships imports what its package.json lists under dependencies (or peerDependencies), not devDependencies, which an installed package does not have.',
      severity: 'error',
      from: { path: SHIPPED_SRC },
      // The one exception: zk-adapter bundles its patched node-zookeeper-client into dist
      // (tsup noExternal), so the installed package carries the fixes; see its README.
      // A peer dependency is also a devDependency of its own package (so the workspace
      // installs it for the package's build and tests): declared as a peer, it is fine.
      to: {
        dependencyTypes: ['npm-dev'],
        dependencyTypesNot: ['type-only', 'npm-peer'],
        pathNot: '/node_modules/node-zookeeper-client/',
      },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules', '/dist/'] },
    // Each package's tsup.config.ts is build configuration run by the root's tsup, not code.
    exclude: { path: '^(packages|apps)/[^/]+/tsup\\.config\\.ts$' },
    tsPreCompilationDeps: true,
    combinedDependencies: false,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'types', 'node', 'default'],
      mainFields: ['module', 'main', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.d.ts', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
