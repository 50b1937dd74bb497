/** A short, printable rendering of a rejected value for error messages. */
export function show(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : String(JSON.stringify(value));
  } catch {
    text = Object.prototype.toString.call(value);
  }
  if (text === undefined || text === 'undefined') text = typeof value;
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** `typeof`, but telling `null` and arrays apart, for error messages. */
export function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}
