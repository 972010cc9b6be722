/**
 * Where the built-in lists come from: source, version, date and size of each.
 * @module
 */
import { meta as disposable } from './generated/disposable.js';
import { meta as free } from './generated/free.js';
import { meta as role } from './generated/role.js';
import { meta as typo } from './generated/typo.js';
import type { ListMeta } from './types.js';

/**
 * Metadata of every built-in list, as recorded by `npm run data`.
 * @example
 * LIST_SOURCES.disposable.sources[0]; // { name: 'mailchecker', version: '6.0.21', date: '2026-07-18', ... }
 */
export const LIST_SOURCES: Readonly<Record<'disposable' | 'free' | 'role' | 'typo', ListMeta>> =
  Object.freeze({
    disposable,
    free,
    role,
    typo,
  });
