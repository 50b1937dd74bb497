import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { ZoottError } from '../../contract/errors.js';
import { type Hierarchy, validateHierarchy } from './hierarchy-types.js';

/** Text formats a hierarchy file may use. */
export type HierarchyFormat = 'json' | 'yaml';

/** The format for a file name by extension (`.json`, `.yaml`, `.yml`), or `null`. */
export function hierarchyFormatOf(fileName: string): HierarchyFormat | null {
  const lower = fileName.toLowerCase();
  if (lower.endsWith('.json')) return 'json';
  if (lower.endsWith('.yaml') || lower.endsWith('.yml')) return 'yaml';
  return null;
}

/**
 * Parses and checks a hierarchy file's text. Core reads no files: the CLI reads the file
 * and passes its text here.
 *
 * @throws ZoottError INVALID_CONFIG for text that does not parse or a tree of the wrong shape.
 */
export function parseHierarchyText(
  text: string,
  format: HierarchyFormat,
  source = 'hierarchy',
): Hierarchy {
  let value: unknown;
  try {
    value = format === 'json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ZoottError(
      'INVALID_CONFIG',
      `${source} is not valid ${format}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  validateHierarchy(value ?? {});
  return (value ?? {}) as Hierarchy;
}

/** Formats a hierarchy (e.g. from `exportHierarchy`) as JSON or YAML text. */
export function formatHierarchy(hierarchy: Hierarchy, format: HierarchyFormat): string {
  return format === 'json' ? `${JSON.stringify(hierarchy, null, 2)}\n` : stringifyYaml(hierarchy);
}
