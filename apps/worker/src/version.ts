/** The package version, reported by `--version`. */
export const VERSION = '0.1.0';
