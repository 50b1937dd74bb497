/** A few DOM helpers: the app builds its pages with these instead of a framework. */

export type Child = Node | string | number | null | undefined | false | Child[];
type AttrValue = string | number | boolean | null | undefined | ((ev: Event) => void);

/** Creates an element: `h('a', { href: '#', class: 'x', onclick: fn }, 'text', child)`. */
export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, AttrValue> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's content. */
export function replace(el: Element, ...children: Child[]): void {
  el.textContent = '';
  append(el, children);
}

const SVG = 'http://www.w3.org/2000/svg';

export function svg(tag: string, attrs: Record<string, string | number> = {}): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  return el;
}

/** `1.2 s`, `3 min 4 s`, `2 h 5 min`. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.floor(seconds % 60)} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** Local date and time with seconds, or `-`. */
export function time(ms: number | undefined | null): string {
  if (ms === undefined || ms === null || !Number.isFinite(ms)) return '-';
  const date = new Date(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

/**
 * Wraps `fn` so it runs at most once per `ms`, never twice at the same time, and once more
 * after the last call: bursts of events cost one re-read, and the last state is always shown.
 */
export function throttle(fn: () => Promise<void> | void, ms: number): () => void {
  let running = false;
  let again = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let last = 0;
  const run = async () => {
    timer = null;
    running = true;
    last = Date.now();
    try {
      await fn();
    } catch (err) {
      console.warn(err);
    } finally {
      running = false;
      if (again) {
        again = false;
        schedule();
      }
    }
  };
  const schedule = () => {
    if (running) {
      again = true;
      return;
    }
    if (timer) return;
    timer = setTimeout(run, Math.max(0, last + ms - Date.now()));
  };
  return schedule;
}

/**
 * A queue of async jobs that run one after another, never overlapping: a page's reads then
 * answer in the order they were asked, so an older answer never overwrites a newer one.
 */
export function sequence(): (job: () => Promise<void>) => Promise<void> {
  let chain: Promise<void> = Promise.resolve();
  return (job) => {
    const run = chain.then(job);
    chain = run.catch(() => undefined);
    return run;
  };
}

/** `fn` with its calls queued one after another (see {@link sequence}). */
export function serial(fn: () => Promise<void>): () => Promise<void> {
  const inOrder = sequence();
  return () => inOrder(fn);
}

/**
 * An error's code and message as one line. A ZoottError's message already starts with its
 * code (`INVALID_JOB: ...`), and a failed record keeps that message, so the code is put in
 * front only when the message does not carry it yet (never `INVALID_JOB: INVALID_JOB: ...`).
 */
export function errorLine(code: string | undefined, message: string): string {
  if (!code || message.startsWith(`${code}:`)) return message;
  return `${code}: ${message}`;
}
