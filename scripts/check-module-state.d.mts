// Types of check-module-state.mjs, for the TypeScript tests that use it.
export interface StateFinding {
  rule: string;
  file: string;
  line: number;
  what: string;
}

export const CORE_SOURCE: string;
export const ALLOWED: { file: string; name: string; reason: string }[];
export function moduleStateFindings(file: string, text: string): StateFinding[];
export function checkModuleState(root?: string): StateFinding[];
