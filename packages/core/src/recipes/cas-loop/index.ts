export * from './cas-loop.js';
