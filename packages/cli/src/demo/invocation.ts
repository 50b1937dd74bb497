/**
 * How the user runs `zoott`, to name it in a hint they can type: `pnpm zoott` under pnpm (a
 * script of the repository, or any pnpm project: pnpm runs an installed binary by its name),
 * `npx zoott` under npm (`npx`, `npm exec`, an npm script), `yarn zoott` under yarn, plain
 * `zoott` otherwise (installed globally, or called by its path). Package managers say who
 * they are in `npm_config_user_agent`.
 */
export function zoottCommand(env: Readonly<Record<string, string | undefined>>): string {
  const agent = env.npm_config_user_agent ?? '';
  if (agent.startsWith('pnpm/')) return 'pnpm zoott';
  if (agent.startsWith('yarn/')) return 'yarn zoott';
  if (agent.startsWith('npm/')) return 'npx zoott';
  return 'zoott';
}
