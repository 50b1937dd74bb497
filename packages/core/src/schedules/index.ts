export {
  nextTick,
  type ScheduleSpec,
  type StoredSchedule,
  tickTaskName,
  validateSchedule,
} from './schedule-spec.js';
export {
  addSchedule,
  currentScheduler,
  LEADERS_ROOT,
  type ListedSchedule,
  listSchedules,
  removeSchedule,
  SCHEDULES_ROOT,
  schedulerElectionPath,
  schedulesPath,
} from './schedule-store.js';
export {
  runScheduler,
  type SchedulerHandle,
  type SchedulerOptions,
  type TickEvent,
} from './scheduler.js';
