/**
 * Fixtures of the known-results unit tests.
 * @module
 */
import type { KnownVerdict } from '../../src/known/types.js';

/** A verdict of a mailbox that exists, with no MX host, provider or reason: the least a kept verdict holds. */
export const VALID: KnownVerdict = {
  status: 'valid',
  sub_status: null,
  accept_all: false,
  mx_record: null,
  smtp_provider: null,
  reason: null,
};
