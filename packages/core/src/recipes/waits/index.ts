export type { WaitOptions } from './conditioned-wait.js';
export * from './get-next.js';
export * from './wait-absent.js';
export * from './wait-timeout.js';
