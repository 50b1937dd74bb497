// `@zoott/core/admin`: looking after a world rather than running tasks in it, the named face
// the `zoott` CLI and the dashboard build their admin verbs on. The doctor (what is damaged,
// and the repair that moves it into the quarantine), a world's ACL (the check `init --auth`
// makes, and the lock-down that applies it), the quarantine's items, the list of worlds.
// Every name here is documented, and the face is narrower than `@zoott/core/internal`.
export {
  type DiagnoseOptions,
  type DiagnosisProgress,
  diagnoseWorld,
  diagnoseWorldMeta,
  type Finding,
  type FindingKind,
  type NotMoved,
  QUARANTINE_ROOT,
  type Quarantined,
  type RepairOutcome,
  repairWorld,
} from './admin/doctor.js';
export {
  PART_BYTES,
  type QuarantineRecord,
  readQuarantined,
} from './admin/quarantine.js';
export {
  type AclMismatch,
  describeAcl,
  type LockDownOptions,
  type LockDownReport,
  lockDownWorld,
  sameAcl,
  worldAclMismatches,
  worldTops,
} from './admin/world-acl.js';
export { listWorlds } from './admin/worlds.js';
