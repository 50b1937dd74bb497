import { describe, expect, it } from 'vitest';
import { errorLine } from '../src/client/dom.js';

describe('errorLine (how the page shows an error)', () => {
  it('puts the code in front of a message that lacks it', () => {
    expect(errorLine('HANDLER_ERROR', 'boom')).toBe('HANDLER_ERROR: boom');
  });

  it("does not double a ZoottError's code, which its message already starts with", () => {
    expect(errorLine('INVALID_JOB', 'INVALID_JOB: executable: missing')).toBe(
      'INVALID_JOB: executable: missing',
    );
  });

  it('shows a message without a code as it is', () => {
    expect(errorLine(undefined, 'plain')).toBe('plain');
  });
});
