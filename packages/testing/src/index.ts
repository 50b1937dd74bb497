export type { Backend, ConnectOptions, TestBackend } from './backend.js';
export { BACKEND_NAMES, describeOnBackends } from './describe-on-backends.js';
export { freshChroot } from './fresh-chroot.js';
export { legacyInit, legacyReplies } from './legacy-world.js';
export { type LosingReplies, losingReplies, type ReplyLoss } from './lost-replies.js';
export { memoryBackend } from './memory-backend.js';
export {
  type OtlpReceiver,
  type OtlpRequest,
  type OtlpSpan,
  spansOf,
  startOtlpReceiver,
} from './otlp-receiver.js';
export {
  eventually,
  isRunning,
  killMarked,
  processesWith,
  runningGroupMembers,
} from './processes.js';
export { freshNamespace, SELF, settled, until } from './task-waits.js';
export { zookeeperBackend } from './zookeeper-backend.js';
