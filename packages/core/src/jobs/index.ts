export * from './error-result.js';
export * from './output.js';
export * from './results.js';
export * from './types.js';
export * from './validate.js';
