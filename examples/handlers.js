// A handlers module to copy: `zoott-worker --handlers examples/handlers.js` (the README's "On
// a real ZooKeeper" runs it). Each named export serves the task type of its name (a default
// export of an object of functions works too). A handler gets the task: key, name, type,
// data, attempt, maxAttempts, hints, signal (aborted when the task is cancelled or the
// worker loses its claim), progress(value) and log(line), both shown by `zoott show`.
// What it returns is the task's result; a throw is a failed attempt, retried with backoff
// until its attempts run out, and an error with `permanent: true` fails the task at once.

/** `requestFile`: accepts a request for a file (`--data '{"url":"https://..."}'`, optional). */
export async function requestFile({ name, data, attempt, progress, log }) {
  const url = data?.url ?? null;
  log(`${name}: accepted ${url ?? 'a request without a url'} (attempt ${attempt})`);
  progress(1);
  return { accepted: name, url };
}
