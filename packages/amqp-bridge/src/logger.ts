/** The logger the bridge writes to: pino's shape (object first, then the message). */
export interface BridgeLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A logger that drops everything. */
export const silentLogger: BridgeLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};
