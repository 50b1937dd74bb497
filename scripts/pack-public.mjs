// Packs every public package of the workspace (the ones a user installs) with `pnpm pack`,
// which turns `workspace:` dependencies into the real versions, exactly as a publish does.
// Used by scripts/check-packages.mjs (publint, attw) and by the pack-and-install test.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every package under packages/ and apps/, by workspace directory. */
function workspacePackages() {
  const found = [];
  for (const area of ['packages', 'apps']) {
    for (const name of readdirSync(path.join(ROOT, area)).sort()) {
      const dir = path.join(ROOT, area, name);
      let manifest;
      try {
        manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
      } catch {
        continue;
      }
      found.push({ name: manifest.name, dir: `${area}/${name}`, manifest });
    }
  }
  return found;
}

/** Every package under packages/ and apps/ that is not `private`, by workspace directory. */
export function publicPackages() {
  return workspacePackages().filter((p) => !p.manifest.private);
}

/** The names of the workspace's `private` packages: none may appear in a packed manifest. */
export function privatePackages() {
  return workspacePackages()
    .filter((p) => p.manifest.private)
    .map((p) => p.name);
}

/**
 * Packs each public package into `dest`; returns them with the tarball's absolute path.
 * The packages must be built (`pnpm build`): a tarball of a package without dist is refused.
 */
export function packPublic(dest) {
  return publicPackages().map((pkg) => {
    const cwd = path.join(ROOT, pkg.dir);
    const out = execFileSync('pnpm', ['pack', '--json', '--pack-destination', dest], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const { filename, files } = JSON.parse(out);
    const tarball = path.isAbsolute(filename) ? filename : path.join(dest, path.basename(filename));
    const shipped = files.map((f) => f.path);
    if (!shipped.some((f) => f.startsWith('dist/')))
      throw new Error(`${pkg.name}: the tarball has no dist/; run \`pnpm build\` first`);
    return { ...pkg, tarball, files: shipped };
  });
}

/** What must never be in a tarball: build state and maps pointing at sources not shipped. */
export function unwantedFiles(files) {
  return files.filter(
    (f) => f.endsWith('.tsbuildinfo') || f.endsWith('.d.ts.map') || /(^|\/)(src|test)\//.test(f),
  );
}
