/**
 * Yothalot's time format, `2015-11-01 23:22:11`: whole seconds, no zone. zoott records ISO
 * 8601 UTC times in ZooKeeper; over AMQP the bridge writes them in Yothalot's form, in UTC.
 * A value that is not an ISO time is passed through untouched.
 */
export function yothalotTime(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?Z$/.exec(value);
  return match ? `${match[1]} ${match[2]}` : value;
}
