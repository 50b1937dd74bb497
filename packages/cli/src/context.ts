import type { Command } from 'commander';
import { type GlobalOptions, resolveSettings, Session, type Settings } from './connection.js';
import { CorruptLog } from './corrupt-log.js';
import { type Colors, colorsFor } from './output/colors.js';

/** What every command gets: merged settings, a lazy session, output helpers. */
export class CommandContext {
  private cached: Settings | null = null;
  private sess: Session | null = null;
  readonly colors: Colors;
  readonly errColors: Colors;
  /** Nodes this command could not read; printed as warnings, and in --json documents. */
  readonly corrupt = new CorruptLog();

  constructor(
    readonly globals: GlobalOptions,
    readonly signal: AbortSignal,
    readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.colors = globals.json
      ? colorsFor(process.stdout, { NO_COLOR: '1' })
      : colorsFor(process.stdout, env);
    this.errColors = colorsFor(process.stderr, env);
  }

  /** Global options merged with a command's own (commander's optsWithGlobals). */
  static of(cmd: Command, signal: AbortSignal): CommandContext {
    return new CommandContext(cmd.optsWithGlobals<GlobalOptions>(), signal);
  }

  get json(): boolean {
    return this.globals.json === true;
  }

  get settings(): Settings {
    if (!this.cached) {
      this.cached = resolveSettings(this.globals, this.env);
      for (const notice of this.cached.notices) this.note(notice);
    }
    return this.cached;
  }

  get world(): string {
    return this.settings.world;
  }

  session(): Session {
    if (!this.sess) {
      this.sess = new Session(this.settings, this.globals.debug === true);
      this.sess.onCorrupt = this.corrupt.add;
    }
    return this.sess;
  }

  /** A line (or block) on stdout. */
  out(text: string): void {
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** The one JSON document of a --json command. */
  printJson(value: unknown): void {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** A note on stderr (never mixed into --json output). */
  note(text: string): void {
    process.stderr.write(`${text}\n`);
  }

  async close(): Promise<void> {
    await this.sess?.close();
  }
}
