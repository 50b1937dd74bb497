export {
  type CleanOptions,
  type CleanReport,
  cleanCompleted,
  cleanFailed,
  recordsOf,
} from './clean.js';
export { chooseVictims, DirIndex, type Indexed } from './dir-index.js';
export { Reaper, type ReaperOptions, type ReapReport, type RetentionTask } from './reaper.js';
export { REMOVE_BATCH, type RemoveReport, removeCompleted } from './remove.js';
export {
  DEFAULT_RETENTION,
  formatKeepCount,
  formatKeepDuration,
  type KeepLimits,
  mergeRetention,
  parseCount,
  parseDuration,
  type RetentionPatch,
  type RetentionSettings,
  readRetention,
  type StoredRetention,
  settingsWorld,
  updateRetention,
} from './settings.js';
