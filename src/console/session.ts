/**
 * The signed-in API key: kept in `sessionStorage` (gone when the tab closes), sent only as a Bearer header.
 * @module
 */
import { signal } from '@preact/signals';

const STORAGE_KEY = 'mailvet.apiKey';

function stored(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

/** The API key, or `null` when signed out. */
export const apiKey = signal<string | null>(stored());

/** Signs in with `key` (kept for this tab only). */
export function signIn(key: string): void {
  try {
    sessionStorage.setItem(STORAGE_KEY, key);
  } catch {
    // storage refused (private mode): the key lives in memory for this page only
  }
  apiKey.value = key;
}

/** Signs out: forgets the key. */
export function signOut(): void {
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // nothing stored
  }
  apiKey.value = null;
}
