// Handlers module of the bench's recovery phase (bench/recovery.mjs), loaded by zoott-worker.
// `slow` on its first attempt runs until it is aborted (the session is lost under it); every
// later attempt, and `quick`, return at once: what the phase times is the way back to work,
// not the work.
export function slow(task) {
  if (task.attempt > 1) return 'again';
  return new Promise((_, reject) => {
    if (task.signal.aborted) return reject(task.signal.reason);
    task.signal.addEventListener('abort', () => reject(task.signal.reason), { once: true });
  });
}

export function quick() {
  return 'done';
}
