// Types of check-facts.mjs, for the TypeScript tests that use it.
export interface FactFinding {
  rule: string;
  file: string;
  line: number;
  what: string;
}

export const LAYOUT_MODULES: string[];
export function layoutFindings(file: string, text: string): FactFinding[];
export function checkFacts(root?: string): FactFinding[];
export const EXIT_CODE_MODULE: string;
export function exitCodeFindings(file: string, text: string): FactFinding[];
export const PROTOCOL_MODULE: string;
export function protocolFindings(file: string, text: string): FactFinding[];
