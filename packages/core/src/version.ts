/**
 * zoott's version. Every package is released together under this one number; the `zoott` CLI
 * and the `zoott-worker` daemon report it as `--version`, and a test holds every
 * package.json to it, so a release changes it here and in the package.json files together.
 */
export const ZOOTT_VERSION = '0.1.0';
