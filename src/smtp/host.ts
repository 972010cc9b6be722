/**
 * The default EHLO/HELO name: this machine's host name.
 * @module
 */
import { hostname } from 'node:os';

const FALLBACK = 'localhost.localdomain';
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * The host name to announce in EHLO when none is configured: `os.hostname()`, lower-cased, when it is a valid
 * domain name (letters, digits, hyphens, dots; at most 253 characters), else `localhost.localdomain`.
 * Mail servers often check that this name resolves back to the connecting IP: set `heloHost` in production.
 * @example
 * defaultHeloHost(); // 'worker-7.example.net'
 */
export function defaultHeloHost(name: () => string = hostname): string {
  let candidate: string;
  try {
    candidate = name().trim().toLowerCase().replace(/\.$/, '');
  } catch {
    return FALLBACK;
  }
  if (candidate.length === 0 || candidate.length > 253) return FALLBACK;
  return candidate.split('.').every((label) => LABEL.test(label)) ? candidate : FALLBACK;
}
