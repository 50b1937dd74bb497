export {
  keytoolBinary,
  makeZkTestCertificates,
  opensslBinary,
  type TestClientCertificate,
  type TestServerCertificate,
  type ZkTestCertificates,
} from './certs.js';
export { ZooKeeperStartError, ZooKeeperUnavailableError } from './errors.js';
export { type FourLetterCommand, fourLetter, serverMode } from './four-letter.js';
export {
  READY_TIMEOUT_MS,
  RESTART_BOUND_MS,
  STOP_GRACE_MS,
  sessionTimeoutRange,
} from './limits.js';
export {
  createNetwork,
  type NamespaceNetwork,
  type NetHost,
  namespacesUnavailable,
} from './netns.js';
export { freePort } from './ports.js';
export { startProxy, type ZkProxy } from './proxy.js';
export {
  serverTls,
  type ZooKeeperSasl,
  type ZooKeeperSecurity,
  type ZooKeeperTls,
} from './security.js';
export { startEnsemble, startZooKeeper } from './start.js';
export type {
  StartEnsembleOptions,
  StartZooKeeperOptions,
  StopOptions,
  ZooKeeperEnsemble,
  ZooKeeperServer,
} from './types.js';
