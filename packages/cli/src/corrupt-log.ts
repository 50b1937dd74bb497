import type { CorruptNode } from '@zoott/core/internal';

/**
 * The corrupt nodes one command came across, each once (by path, in the order found). Verbs
 * put them in their --json document; the runner prints them on stderr.
 */
export class CorruptLog {
  private readonly byPath = new Map<string, CorruptNode>();

  /** A sink for the engine and the world readers (bound, so it can be passed around). */
  readonly add = (node: CorruptNode): void => {
    if (!this.byPath.has(node.path)) this.byPath.set(node.path, node);
  };

  list(): CorruptNode[] {
    return [...this.byPath.values()];
  }

  get size(): number {
    return this.byPath.size;
  }
}
