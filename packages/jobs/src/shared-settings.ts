// Settings the worker daemon and the AMQP bridge take alike: the same flag, environment
// variable and help, so one environment serves both programs. Each program's table adds its
// default in its own form.

import { LOG_LEVELS, type SettingSpecBase } from './setting-values.js';

/** The ZooKeeper session timeout, in milliseconds. */
export const SESSION_TIMEOUT_SETTING: SettingSpecBase<'sessionTimeoutMs'> = {
  key: 'sessionTimeoutMs',
  flag: '--session-timeout',
  env: 'ZOOTT_SESSION_TIMEOUT_MS',
  kind: 'int',
  arg: 'ms',
  unit: 'ms',
  help: 'ZooKeeper session timeout',
};

/** How much the program logs. */
export const LOG_LEVEL_SETTING: SettingSpecBase<'logLevel'> = {
  key: 'logLevel',
  flag: '--log-level',
  env: 'ZOOTT_LOG_LEVEL',
  kind: 'string',
  arg: 'level',
  // Checked where it is read, so a bad one is refused naming the flag, variable or file.
  values: LOG_LEVELS,
  help: `${LOG_LEVELS.slice(0, -1).join(', ')} or ${LOG_LEVELS.at(-1)}`,
};

/** Whether the program starts OpenTelemetry's SDK and traces every task (docs/tracing.md). */
export const TRACE_SETTING: SettingSpecBase<'trace'> = {
  key: 'trace',
  flag: '--trace',
  env: 'ZOOTT_TRACE',
  kind: 'bool',
  arg: '',
  help: 'trace every task with OpenTelemetry: spans sent as the standard OTEL_* variables say (OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318)',
};
