/** How a pattern names the default exchange, whose name is empty: two double quotes. */
export const DEFAULT_EXCHANGE_PATTERN = '""';

/**
 * Which exchanges results may be published to, from `--reply-exchanges` patterns: `*` stands
 * for any run of characters (none included), `?` for one character, everything else for
 * itself; `""` (or an empty pattern) is the default exchange, which `*` matches too. No
 * patterns (the default): any exchange, as Yothalot does. A job can name any exchange, and
 * the bridge publishes with its own RabbitMQ credentials: this is how an operator keeps jobs
 * from publishing into exchanges that are not theirs.
 */
export function replyExchangePolicy(
  patterns: readonly string[] | undefined,
): (exchange: string) => boolean {
  if (patterns === undefined || patterns.length === 0) return () => true;
  const res = patterns
    .map((p) => (p === DEFAULT_EXCHANGE_PATTERN ? '' : p))
    .map(
      (path) =>
        new RegExp(
          `^${path
            .split('')
            .map((ch) =>
              ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.+^${}()|[\]\\]/g, '\\$&'),
            )
            .join('')}$`,
          's',
        ),
    );
  return (exchange) => res.some((re) => re.test(exchange));
}
