import { describe, expect, it } from 'vitest';
import { zoottCommand } from '../src/demo/invocation.js';
import { assertBuilt, zoott } from './helpers.js';

// The embedded demo ends with what to type next: the command as the user runs zoott, not the
// repository's `pnpm zoott` script for someone who installed it with npm.

describe('the demo names zoott as the user runs it', { timeout: 180_000 }, () => {
  const cases: [string | undefined, string][] = [
    ['npm/11.6.2 node/v20.20.2 linux x64 workspaces/false', 'npx zoott'],
    ['pnpm/12.4.2 npm/? node/v20.20.2 linux x64', 'pnpm zoott'],
    ['yarn/4.9.0 npm/? node/v20.20.2 linux x64', 'yarn zoott'],
    [undefined, 'zoott'],
  ];

  it('from the package manager that started it (npm_config_user_agent)', () => {
    for (const [agent, command] of cases)
      expect(zoottCommand(agent === undefined ? {} : { npm_config_user_agent: agent })).toBe(
        command,
      );
  });

  it('in the binary: npm users are told npx zoott, a global install zoott', async () => {
    assertBuilt();
    for (const [agent, command] of [cases[0]!, cases[3]!]) {
      const r = await zoott(['demo', '--items', '1'], {
        env: { npm_config_user_agent: agent },
        timeoutMs: 120_000,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(
        `next: \`${command} --help\`; against a real ZooKeeper: \`${command} demo --connect 127.0.0.1:2181\``,
      );
      expect(r.stderr).not.toMatch(command === 'zoott' ? /pnpm|npx/ : /pnpm/);
    }
  });
});
