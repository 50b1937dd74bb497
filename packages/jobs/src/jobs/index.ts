export { cgroup2Mount, jobCgroupSupport, ownCgroup } from './cgroup.js';
export * from './containment.js';
export { type KillDeadline, keeperLink, monotonicMs } from './keeper-link.js';
export { type LauncherShell, launch, launcherShell, leakedFds } from './launcher.js';
export * from './process.js';
export * from './racer.js';
export * from './regular.js';
export * from './resolve.js';
export * from './run-as.js';
