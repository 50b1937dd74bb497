import { ZoottError, type ZoottErrorDetails } from '../../contract/errors.js';

/** zkutil's LockTimeout: a `Lock` could not be acquired in time. Code `LOCK_TIMEOUT`. */
export class LockTimeout extends ZoottError {
  constructor(message: string, details: ZoottErrorDetails = {}) {
    super('LOCK_TIMEOUT', message, details);
    this.name = 'LockTimeout';
  }
}
