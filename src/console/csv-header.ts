/**
 * The header of an uploaded CSV, read in the browser so that the user can pick the address column before the
 * upload (the server finds the same column by the same names when none is picked).
 * @module
 */
export { findEmailColumn as guessEmailColumn } from '../cli/email-column.js';

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
