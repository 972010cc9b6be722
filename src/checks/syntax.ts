/**
 * The syntax check: is the input a deliverable address? It reads `local@domain` into the state for the result
 * even when the answer is no, and on success sets `state.address` in canonical form for every later check.
 * @module
 */
import { verdictOf } from '../result.js';
import { explainSyntaxFailure } from '../syntax/explain.js';
import { parseAddress } from '../syntax/parse-address.js';
import type { Check } from './types.js';

export { SYNTAX_FAILURES, type SyntaxFailure } from '../syntax/failures.js';
export type { InvalidAddress, SyntaxResult, ValidAddress } from '../syntax/parse-address.js';
export type { SyntaxOptions } from '../syntax/syntax-options.js';
export { parseAddress };

/**
 * Built-in check `syntax`: RFC 5321 / RFC 6531 envelope syntax, IDNA, length limits, special-use names and
 * unsafe Unicode (docs/syntax.md). A failure is final: `invalid` / `failed_syntax_check`.
 * @example
 * const verifier = createVerifier({ checks: [syntaxCheck] }); // syntax only
 */
export const syntaxCheck: Check = {
  name: 'syntax',
  run(state) {
    const result = parseAddress(state.email, state.options);
    state.user = result.user;
    state.domain = result.domain;
    if (!result.ok) {
      state.reason = `${result.reason}: ${explainSyntaxFailure(result.reason)}`;
      return verdictOf('failed_syntax_check');
    }
    state.address = result.address;
    return undefined;
  },
};
