/** An in-process worker daemon with its log lines captured, for tests that read them. */
import { startWorkerDaemon, type WorkerDaemon } from '@zoott/jobs';

type DaemonConfig = Parameters<typeof startWorkerDaemon>[0];
type Logger = NonNullable<DaemonConfig['logger']>;

export interface LogLine {
  level: string;
  msg: string;
  fields: object;
}

/** A pino-shaped logger that keeps every line in `lines`. */
export function captureLogger(lines: LogLine[]): Logger {
  const at =
    (level: string) =>
    (fields: object | string, msg?: string): void => {
      if (typeof fields === 'string') lines.push({ level, msg: fields, fields: {} });
      else lines.push({ level, msg: msg ?? '', fields });
    };
  const logger = {
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    fatal: at('fatal'),
    child: () => logger,
  };
  return logger as unknown as Logger;
}

export async function startDaemon(
  config: DaemonConfig,
): Promise<{ daemon: WorkerDaemon; lines: LogLine[] }> {
  const lines: LogLine[] = [];
  const daemon = await startWorkerDaemon({
    createWorld: true,
    ...config,
    logger: captureLogger(lines),
  });
  return { daemon, lines };
}

/** Log lines that mean the worker loop hit an error (a loop on bad input shows many). */
export function loopErrors(lines: readonly LogLine[]): LogLine[] {
  return lines.filter((l) => l.msg === 'worker loop error');
}
