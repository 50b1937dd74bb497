import { randomBytes } from 'node:crypto';
import type { EngineClock } from './types.js';

/**
 * The marks (`qid`) one engine's queue calls leave on their entries, so a call can find its
 * entry after a lost reply. Time and randomness come from the engine's clock, so a test's
 * clock decides them; the count of calls keeps one engine's marks apart under a clock that
 * repeats itself, and the engine's tag keeps two engines' apart. The tag is drawn from the
 * system, not the clock: two engines sharing a test clock whose `random` repeats would
 * otherwise draw the same tag, count the same calls, and take each other's entries for
 * their own.
 */
export class QueueIds {
  private calls = 0;
  private readonly tag = randomBytes(6).readUIntBE(0, 6).toString(36);

  /** The mark of the next queue call, read from `clock`. */
  next(clock: EngineClock): string {
    this.calls += 1;
    const random = Math.floor(clock.random() * 36 ** 8).toString(36);
    return `${clock.now().toString(36)}${random}${this.tag}.${this.calls.toString(36)}`;
  }
}
