import type { Coordinator, Handlers } from '@zoott/core';

/**
 * @zoott/jobs' handlers for the built-in JSON job types, allowed to run only the
 * node executable (the demo's jobs run `node -e`). Imported lazily: only the demo runs
 * jobs inside the CLI process, and @zoott/jobs brings pino and prom-client.
 */
export async function demoJobHandlers(coordinator: Coordinator, world: string): Promise<Handlers> {
  const { jobHandlers } = await import('@zoott/jobs');
  return jobHandlers({ coordinator, world, allowExec: [process.execPath] });
}
