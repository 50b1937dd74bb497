export * from './is-backward-locking.js';
