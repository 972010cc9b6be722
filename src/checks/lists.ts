/**
 * The lists check: blocklist and allowlist, disposable, role and free providers.
 * @module
 */
import { disposableDomains } from '../data/disposable.js';
import { domainAnswers } from '../data/domain-answers.js';
import { addressListed } from '../data/domains.js';
import { freeDomains } from '../data/free.js';
import { normalizeRoleLocalPart, roleNames } from '../data/role.js';
import { verdictOf } from '../result.js';
import type { Check } from './types.js';

/**
 * Looks the address up on the caller's blocklist and allowlist and on the disposable, free and role lists
 * (with the caller's `lists` patches applied). Sets `allowlisted`, `disposable`, `free` and `role` first,
 * so the flags are in the result even when a verdict ends the run, then decides:
 * `do_not_mail`/`blocklisted`, else `do_not_mail`/`disposable`, else (with `roleIsDoNotMail`)
 * `do_not_mail`/`role_based`. An allowlisted address gets none of these verdicts. Does nothing for an
 * address that failed the syntax check. Every lookup is O(1) per domain label.
 */
export const listsCheck: Check = {
  name: 'lists',
  run(state) {
    const address = state.address;
    if (address === null) return undefined;
    const { options } = state;
    const { lists } = options;
    if (addressListed(options.allowlist, address)) state.allowlisted = true;
    const blocklisted = addressListed(options.blocklist, address);
    if (address.literalAddress === null) {
      const answers = domainAnswers(
        disposableDomains(lists.disposable),
        freeDomains(lists.free),
        address.domain,
        address.unicodeDomain,
      );
      state.disposable = answers.disposable;
      state.free = answers.free;
    }
    state.role = roleNames(lists.role).has(normalizeRoleLocalPart(address.local));
    if (state.allowlisted) return undefined;
    if (blocklisted) {
      state.reason = 'the address or its domain is on the blocklist option';
      return verdictOf('blocklisted');
    }
    if (state.disposable) {
      state.reason = `${address.domain} is on the disposable-address list (throwaway mailboxes)`;
      return verdictOf('disposable');
    }
    if (state.role && options.roleIsDoNotMail) {
      state.reason = `"${address.local}" is a role account (a team or function, not a person); roleIsDoNotMail is on`;
      return verdictOf('role_based');
    }
    return undefined;
  },
};
