/**
 * The role local-part list (RFC 2142 and common role names, see docs/lists.md).
 * @module
 */
import type { ListPatch } from '../options.js';
import { names } from './generated/role.js';
import { type Lookup, memoByPatch, patched, sortedList } from './lookup.js';

/**
 * Normalises a local part for role matching: lower case, without a `+tag`, without the separators `-`, `_`
 * and `.`. So `No-Reply+news`, `no_reply` and `no.reply` all become `noreply`.
 * @example
 * normalizeRoleLocalPart('Customer.Service+2024'); // 'customerservice'
 */
export function normalizeRoleLocalPart(local: string): string {
  const plus = local.indexOf('+');
  const base = (plus < 0 ? local : local.slice(0, plus)).toLowerCase();
  let start = 0;
  let out = '';
  for (let i = 0; i < base.length; i += 1) {
    const code = base.charCodeAt(i);
    if (code === 0x2d || code === 0x5f || code === 0x2e) {
      out += base.slice(start, i);
      start = i + 1;
    }
  }
  return start === 0 ? base : out + base.slice(start);
}

const BUILT_IN: Lookup = sortedList(names);

const withPatch = memoByPatch((patch: ListPatch) => patched(BUILT_IN, patch, normalizeRoleLocalPart));

/**
 * The role list with the caller's patch applied (`lists.role`); entries are looked up normalised by
 * {@link normalizeRoleLocalPart}. Patches are cached by identity.
 * @example
 * roleNames().has(normalizeRoleLocalPart('Sales')); // true
 */
export function roleNames(patch?: ListPatch): Lookup {
  return patch === undefined ? BUILT_IN : withPatch(patch);
}

/**
 * True when a local part names a role (info, sales, postmaster, ...) rather than a person.
 * @example
 * isRoleLocalPart('no_reply+alerts'); // true
 * isRoleLocalPart('jane.doe'); // false
 */
export function isRoleLocalPart(local: string, patch?: ListPatch): boolean {
  return roleNames(patch).has(normalizeRoleLocalPart(local));
}
