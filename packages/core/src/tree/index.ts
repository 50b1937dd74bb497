export * from './blocking.js';
export * from './functors.js';
export * from './keys.js';
export * from './limits.js';
export * from './names.js';
export * from './ordering.js';
export * from './patterns.js';
export * from './task-map.js';
