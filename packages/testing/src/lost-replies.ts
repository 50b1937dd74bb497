import { type Coordinator, type Op, ZoottError } from '@zoott/core';

/** Where a lost reply strikes: before the multi reaches the server, or after it applied. */
export type ReplyLoss = 'before' | 'after';

/** A coordinator that loses chosen `multi` replies, and the switch that arms it. */
export interface LosingReplies {
  /** The coordinator to hand to the code under test. */
  c: Coordinator;
  /**
   * Arms (or with `null` disarms) one lost reply: the next `multi` that `when` accepts (any,
   * by default) fails CONNECTION_LOSS, before or after reaching the server, with the session
   * intact. `meanwhile` runs before the failure is reported (an expiry, say).
   */
  lose(
    loss: ReplyLoss | null,
    options?: { when?: (ops: readonly Op[]) => boolean; meanwhile?: () => Promise<void> },
  ): void;
}

/**
 * Wraps a coordinator so a test can lose a multi's reply on purpose: what a connection that
 * drops mid-request and comes back inside the session looks like to the caller, who cannot
 * tell whether the write applied. Deterministic on both adapters.
 */
export function losingReplies(coordinator: Coordinator): LosingReplies {
  let armed: ReplyLoss | null = null;
  let when: ((ops: readonly Op[]) => boolean) | undefined;
  let meanwhile: (() => Promise<void>) | undefined;
  const proxy = new Proxy(coordinator, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop !== 'multi') return typeof value === 'function' ? value.bind(target) : value;
      return async (ops: readonly Op[]) => {
        const loss = armed !== null && (when?.(ops) ?? true) ? armed : null;
        if (loss) armed = null;
        const lost = () =>
          new ZoottError('CONNECTION_LOSS', 'connection to the server was lost (test)', {
            op: 'multi',
          });
        if (loss) await meanwhile?.();
        if (loss === 'before') throw lost();
        const out = await target.multi(ops);
        if (loss === 'after') throw lost();
        return out;
      };
    },
  });
  return {
    c: proxy,
    lose(loss, options = {}) {
      armed = loss;
      when = options.when;
      meanwhile = options.meanwhile;
    },
  };
}
