import type { Coordinator } from '@zoott/core';

/**
 * A view of a coordinator that calls `onCall` for each call of the named methods. The
 * hierarchy recipes take a Coordinator and report nothing, so progress is counted here.
 */
export function countingCoordinator(
  coordinator: Coordinator,
  methods: ReadonlyArray<keyof Coordinator>,
  onCall: (method: string) => void,
): Coordinator {
  const watched = new Set<PropertyKey>(methods);
  return new Proxy(coordinator, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (!watched.has(prop)) return bound;
      return (...args: unknown[]) => {
        onCall(String(prop));
        return bound(...args);
      };
    },
  });
}
