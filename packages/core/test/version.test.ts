import { readdirSync, readFileSync } from 'node:fs';
import { ZOOTT_VERSION } from '@zoott/core';
import { expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url);

/** Every package.json of the workspace (packages/*, apps/*, and core's tests). */
function manifests(): string[] {
  const found = ['packages/core/test/package.json'];
  for (const group of ['packages', 'apps']) {
    for (const name of readdirSync(new URL(group, root)))
      found.push(`${group}/${name}/package.json`);
  }
  return found;
}

it('every package is released under the one zoott version', () => {
  const versions = Object.fromEntries(
    manifests().map((file) => {
      const manifest = JSON.parse(readFileSync(new URL(file, root), 'utf8')) as {
        version?: string;
      };
      return [file, manifest.version];
    }),
  );
  expect(Object.keys(versions).length).toBeGreaterThanOrEqual(10);
  for (const [file, version] of Object.entries(versions)) {
    expect(version, `${file} has the version of ZOOTT_VERSION`).toBe(ZOOTT_VERSION);
  }
});
