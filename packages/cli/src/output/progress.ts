/** A progress report on stderr. */
export interface Progress {
  /** Sets how much is done (and the total, when it became known or changed). */
  update(done: number, total?: number, note?: string): void;
  /** Draws the final state and ends the line. */
  finish(note?: string): void;
}

export interface ProgressOptions {
  label: string;
  total?: number;
  stream?: NodeJS.WriteStream;
  /** Plain mode: one line per this many ms (default 2000). */
  plainEveryMs?: number;
  /** Nothing at all (e.g. --quiet). */
  silent?: boolean;
}

const BAR = 28;

/**
 * A bar redrawn in place on a terminal; when stderr is not a TTY, a plain line now and then
 * instead (CI logs and pipes get no carriage returns). Never writes to stdout, so --json
 * output stays one clean document.
 */
export function createProgress(opts: ProgressOptions): Progress {
  const stream = opts.stream ?? process.stderr;
  const tty = stream.isTTY === true;
  const every = opts.plainEveryMs ?? 2000;
  let total = opts.total;
  let done = 0;
  let note = '';
  let lastDraw = 0;
  const started = Date.now();
  const text = () => {
    const pct = total ? Math.min(100, Math.floor((done / total) * 100)) : null;
    const count = total !== undefined ? `${done}/${total}` : `${done}`;
    const suffix = `${note ? ` ${note}` : ''}`;
    if (!tty) return `${opts.label}: ${count}${pct !== null ? ` (${pct}%)` : ''}${suffix}`;
    const filled = total ? Math.round((Math.min(done, total) / total) * BAR) : 0;
    const bar = total ? `[${'#'.repeat(filled)}${'.'.repeat(BAR - filled)}] ` : '';
    return `${opts.label} ${bar}${count}${pct !== null ? ` ${pct}%` : ''}${suffix}`;
  };
  const draw = (force: boolean) => {
    if (opts.silent) return;
    const now = Date.now();
    if (tty) {
      if (!force && now - lastDraw < 80) return;
      stream.write(`\r\u001b[2K${text()}`);
    } else {
      if (!force && now - lastDraw < every) return;
      if (!force && now - started < every) return;
      stream.write(`${text()}\n`);
    }
    lastDraw = now;
  };
  return {
    update(doneNow, totalNow, noteNow) {
      done = doneNow;
      if (totalNow !== undefined) total = totalNow;
      if (noteNow !== undefined) note = noteNow;
      draw(false);
    },
    finish(noteNow) {
      if (noteNow !== undefined) note = noteNow;
      if (opts.silent) return;
      if (tty) {
        draw(true);
        stream.write('\n');
      } else draw(true);
    },
  };
}
