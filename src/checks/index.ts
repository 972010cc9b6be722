/**
 * The built-in checks and their default order.
 * @module
 */
import { listsCheck } from './lists.js';
import { mxCheck } from './mx.js';
import { smtpCheck } from './smtp.js';
import { syntaxCheck } from './syntax.js';
import type { Check } from './types.js';
import { typoCheck } from './typo.js';

/**
 * The default checks, in order: syntax (final on failure), typo (never final), lists (blocklist,
 * disposable, role), mx (DNS routing), smtp (RCPT probe and catch-all). Compose your own order with the
 * `checks` option, or skip some with `disableChecks`.
 */
export const DEFAULT_CHECKS: readonly Check[] = Object.freeze([
  syntaxCheck,
  typoCheck,
  listsCheck,
  mxCheck,
  smtpCheck,
]);

export { listsCheck, mxCheck, smtpCheck, syntaxCheck, typoCheck };
