// Types of pack-public.mjs, for the TypeScript tests that use it.
export const ROOT: string;

export interface PublicPackage {
  name: string;
  /** Workspace directory, e.g. `packages/core`. */
  dir: string;
  manifest: { name: string; version: string; private?: boolean; [field: string]: unknown };
}

export interface PackedPackage extends PublicPackage {
  /** Absolute path of the .tgz. */
  tarball: string;
  /** Paths inside the tarball. */
  files: string[];
}

export function publicPackages(): PublicPackage[];
export function privatePackages(): string[];
export function packPublic(dest: string): PackedPackage[];
export function unwantedFiles(files: readonly string[]): string[];
