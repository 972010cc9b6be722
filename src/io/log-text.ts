/**
 * Text for log lines that the CLI and the HTTP adapter share: email addresses removed from free text (error
 * messages) unless the operator asked for them, and the fields of a thrown value.
 * @module
 */

/** Anything shaped like an address: a local part, `@`, a domain; quoted local parts included. */
const ADDRESS = /(?:"[^"\r\n]*"|[^\s@<>()[\]\\,;:"'`]+)@[^\s@<>()[\]\\,;:"'`]+/g;

/** What an address becomes in a log line. */
export const ADDRESS_PLACEHOLDER = '[address]';

/** `text` with every address-shaped run replaced by {@link ADDRESS_PLACEHOLDER}. */
export function withoutAddresses(text: string): string {
  return text.includes('@') ? text.replace(ADDRESS, ADDRESS_PLACEHOLDER) : text;
}

/** The message of a thrown value, without email addresses unless `addresses`. */
export function errorText(error: unknown, addresses: boolean): string {
  const message = error instanceof Error ? error.message : String(error);
  return addresses ? message : withoutAddresses(message);
}

/** The `error` field of a log line: the thrown value's name, string `code` and message (see {@link errorText}). */
export function errorFields(
  error: unknown,
  addresses: boolean,
): { name: string; code?: string; message: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return {
    name: error instanceof Error ? error.name : typeof error,
    ...(typeof code === 'string' ? { code } : {}),
    message: errorText(error, addresses),
  };
}
