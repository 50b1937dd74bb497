// Everything the other zoott packages build on: the adapters (path and frame rules, error
// mapping), the CLI, the worker daemon and the dashboard (world layout, key codec, entry
// names, registry), and the tests. A superset of the package root, with no stability
// promise: names here may change in any release. Applications import `@zoott/core`.
export * from './contract/index.js';
export * from './engine/index.js';
export * from './tree/index.js';
