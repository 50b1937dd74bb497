import { ZoottError, type ZoottErrorDetails } from '../../contract/errors.js';

/**
 * zkutil's ZKWaitTimeout: a conditioned wait (`getNext`, `waitAbsent`,
 * `CachedReader.watch`) ran out of time. Code `WAIT_TIMEOUT`.
 */
export class WaitTimeout extends ZoottError {
  constructor(message: string, details: ZoottErrorDetails = {}) {
    super('WAIT_TIMEOUT', message, details);
    this.name = 'WaitTimeout';
  }
}
