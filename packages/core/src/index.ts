export * from './contract/index.js';
export * from './engine/index.js';
export * from './jobs/index.js';
export * from './recipes/index.js';
export * from './tree/index.js';
export { ZOOTT_VERSION } from './version.js';
