import type { Coordinator } from '@zoott/core';

/**
 * Counts every request a coordinator sends about a path (its first argument a path, or the
 * ops of a multi), and every children watch of a pending bucket that fires (a notification
 * the server sends), one line each, so a failure shows what went out and what came in.
 */
export function countingRequests(c: Coordinator): { c: Coordinator; sent: string[] } {
  const sent: string[] = [];
  const counted = (path: string, options: unknown): unknown => {
    const watch = (options as { watch?: (...a: unknown[]) => void } | undefined)?.watch;
    if (!path.startsWith('/zoott_p/') || typeof watch !== 'function') return options;
    return {
      ...(options as object),
      watch: (...a: unknown[]) => {
        sent.push(`notified ${path}`);
        watch(...a);
      },
    };
  };
  const proxy = new Proxy(c, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const first = args[0];
        if (typeof first === 'string' && prop === 'childrenWithStat')
          args[1] = counted(first, args[1]);
        if (typeof first === 'string' && first.startsWith('/'))
          sent.push(`${String(prop)} ${first}`);
        else if (Array.isArray(first))
          sent.push(
            `${String(prop)} ${(first as { path?: string }[]).map((o) => o.path).join(' ')}`,
          );
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { c: proxy, sent };
}
