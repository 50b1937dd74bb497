// The job cgroup modes, apart from the code that makes cgroups: the settings table (loaded
// without the daemon) names them too.

/**
 * Whether jobs get a cgroup of their own: `auto` where the host allows one (else process
 * groups), `require` refuses to run a job without one, `off` uses process groups only.
 */
export type JobCgroupMode = 'auto' | 'require' | 'off';

/** The job cgroup modes, for settings and errors. */
export const JOB_CGROUP_MODES: readonly JobCgroupMode[] = ['auto', 'require', 'off'];
