import { readFileSync } from 'node:fs';
import type { AmqpBridgeOptions } from '@zoott/amqp-bridge';
import { settingError } from '@zoott/jobs/config';
import { type ResolvedBridgeSettings, sourceName } from './settings.js';

/**
 * The TLS options of the AMQP connection, read from the PEM files the settings name. A file
 * that cannot be read, or a certificate without its key (or a key without its certificate),
 * is bad configuration naming the setting: found here, before anything connects, rather
 * than as a bare ENOENT or a handshake that fails for a reason it does not name.
 *
 * @throws ZoottError INVALID_CONFIG
 */
export function tlsSocketOptions({
  settings,
  sources,
}: ResolvedBridgeSettings): NonNullable<AmqpBridgeOptions['socketOptions']> {
  const read = (key: 'amqpCa' | 'amqpCert' | 'amqpKey'): Buffer | undefined => {
    const file = settings[key];
    if (file === undefined) return undefined;
    try {
      return readFileSync(file);
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw settingError(sourceName(key, sources), `cannot read ${file} (${why})`, key);
    }
  };
  if ((settings.amqpCert === undefined) !== (settings.amqpKey === undefined)) {
    const given = settings.amqpCert === undefined ? 'amqpKey' : 'amqpCert';
    throw settingError(
      sourceName(given, sources),
      'a client certificate and its key go together: give both --amqp-cert and --amqp-key',
      given,
    );
  }
  const ca = read('amqpCa');
  const cert = read('amqpCert');
  const key = read('amqpKey');
  return { ...(ca ? { ca: [ca] } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
}
