/**
 * Which column of a CSV header holds the addresses: shared by the CLI, the HTTP list upload (through the CLI's
 * reader) and the web console, so that all three guess the same column. Pure: no Node module, so the console
 * bundle can take it.
 * @module
 */

/** Header names taken for the address column, compared without case, spaces, `-` or `_`. */
const EMAIL_HEADERS = new Set([
  'email',
  'emails',
  'emailaddress',
  'emailaddr',
  'emailid',
  'mail',
  'mailaddress',
  'courriel',
  'correo',
  'correoelectronico',
  'epost',
  'emailadresse',
  'mailadresse',
]);

function compact(header: string): string {
  return header
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, '');
}

/** Index of the header that names the address column, or -1. */
export function findEmailColumn(headers: readonly string[]): number {
  const names = headers.map(compact);
  const exact = names.findIndex((name) => EMAIL_HEADERS.has(name));
  return exact !== -1 ? exact : names.findIndex((name) => name.includes('email') && !name.includes('@'));
}
