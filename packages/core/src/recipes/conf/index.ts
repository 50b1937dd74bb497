export * from './conf-values.js';
export * from './zk-conf.js';
