/**
 * The header of an uploaded CSV, read in the browser so that the user can pick the address column before the
 * upload (the server finds the same column by the same names when none is picked).
 * @module
 */

/** Header names taken for the address column (as `mailvet bulk` and the API guess it). */
const EMAIL_HEADERS = new Set([
  'email',
  'emails',
  'emailaddress',
  'emailaddr',
  'emailid',
  'mail',
  'mailaddress',
]);

/** The cells of the first line of `text`, split at its delimiter (comma, semicolon or tab); quotes honoured. */
export function headerCells(text: string): string[] {
  const line = (text.split(/\r?\n/, 1)[0] ?? '').replace(/^\uFEFF/, '');
  const delimiter = [',', ';', '\t'].reduce((best, candidate) =>
    line.split(candidate).length > line.split(best).length ? candidate : best,
  );
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (quoted) {
      if (char === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === delimiter) {
      cells.push(cell);
      cell = '';
    } else cell += char;
  }
  cells.push(cell);
  return cells.map((value) => value.trim());
}

/** The index of the header that names the address column, or -1. */
export function guessEmailColumn(headers: readonly string[]): number {
  const names = headers.map((header) => header.toLowerCase().replace(/[\s_-]+/g, ''));
  const exact = names.findIndex((name) => EMAIL_HEADERS.has(name));
  return exact !== -1 ? exact : names.findIndex((name) => name.includes('email'));
}
