export * from './export-hierarchy.js';
export * from './hierarchy-text.js';
export * from './hierarchy-types.js';
export * from './init-hierarchy.js';
