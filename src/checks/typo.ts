/**
 * The typo check: suggests a correction of a mistyped domain in `did_you_mean`. Never a verdict.
 * @module
 */
import { addressListed, normalizeDomainEntry } from '../data/domains.js';
import { memoByPatch, patchEntries } from '../data/lookup.js';
import { parseAddress } from '../syntax/parse-address.js';
import { type DomainSuggester, defaultSuggester } from '../typo/suggest.js';
import type { Check, CheckState } from './types.js';

const suggesters = new WeakMap<readonly string[], DomainSuggester>();

/** The built-in suggester extended with the caller's `suggestDomains`, cached by the array's identity. */
function suggesterFor(extra: readonly string[]): DomainSuggester {
  if (extra.length === 0) return defaultSuggester();
  let suggester = suggesters.get(extra);
  if (suggester === undefined) {
    suggester = defaultSuggester().extend(extra);
    suggesters.set(extra, suggester);
  }
  return suggester;
}

/** Domains the caller put on the free list: real providers, so never corrected into another. */
const callerFree = memoByPatch((patch) => patchEntries(patch, normalizeDomainEntry));

/** The domain without the dots it ends with (`gmail.com.` -> `gmail.com`), or `null` when it ends with none. */
function withoutTrailingDots(domain: string): string | null {
  const trimmed = domain.replace(/\.+$/, '');
  return trimmed === domain || trimmed === '' ? null : trimmed;
}

/**
 * `did_you_mean` for an address that failed the syntax check, when its domain is a near miss of a known one
 * or merely ends with a dot (`jane@gmail.com.`, `jane@acme.io.`: the root dot has no place in an address).
 */
function suggestAfterFailure(state: CheckState): void {
  const { user, domain, options } = state;
  if (user === null || domain === null || state.did_you_mean !== null) return;
  const undotted = withoutTrailingDots(domain);
  const suggestion = suggesterFor(options.suggestDomains).suggest(undotted ?? domain) ?? undotted;
  if (suggestion === null) return;
  const corrected = parseAddress(`${user}@${suggestion}`, options);
  if (corrected.ok) state.did_you_mean = corrected.address.normalized;
}

/**
 * Sets `did_you_mean` to the address with its domain corrected (`jane@gmial.com` gives
 * `jane@gmail.com`) when the domain looks like a typo of a popular one, else leaves it `null`.
 * It also runs after a final verdict ({@link Check.annotatesFailures}): an address that failed the syntax
 * check on its domain (`jane@yahoo.co.k`, `jane@gmail,com`, `jane@gmail`, `jane@gmail.com.`) gets a
 * suggestion when the corrected address passes the syntax check. Does nothing for a domain literal, for an allowlisted address and for a domain the
 * caller listed as free. Suggestions point to the built-in popular domains and to the `suggestDomains` option;
 * see docs/typo.md.
 */
export const typoCheck: Check = {
  name: 'typo',
  annotatesFailures: true,
  run(state) {
    const address = state.address;
    if (address === null) {
      suggestAfterFailure(state);
      return undefined;
    }
    // A domain literal, or a dotless name the caller allowed (`localhost`), is nobody's typo.
    if (address.literalAddress !== null || !address.domain.includes('.')) return undefined;
    const { options } = state;
    if (addressListed(options.allowlist, address)) return undefined;
    const free = options.lists.free;
    if (free !== undefined && callerFree(free).has(address.domain)) return undefined;
    const suggestion = suggesterFor(options.suggestDomains).suggest(address.domain);
    if (suggestion !== null) {
      const local = address.normalized.slice(0, address.normalized.lastIndexOf('@'));
      state.did_you_mean = `${local}@${suggestion}`;
    }
    return undefined;
  },
};
