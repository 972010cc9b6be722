/**
 * What `heloHost` and `mailFrom` may be: they go onto the SMTP wire as they are, so anything a mail server would
 * refuse, or that could end or split a command, is refused up front (an `OptionsError` from `createVerifier`).
 * @module
 */

/** C0 controls, DEL, C1 controls (U+0085 NEXT LINE among them), and the Unicode line and paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
/** A UTF-16 surrogate without its pair: not a character, not encodable as UTF-8. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^IPv6:[0-9A-Fa-f:.]{2,45}$/;
/** Longest `MAIL FROM` path: 256 octets with its angle brackets (RFC 5321 4.5.3.1.3). */
const MAX_PATH = 254;

/** True for a host name (LDH labels, at most 253 characters) or an address literal (`[192.0.2.1]`, `[IPv6:...]`). */
function isDomainOrLiteral(value: string): boolean {
  if (value.startsWith('[') && value.endsWith(']')) {
    const inner = value.slice(1, -1);
    return IPV4.test(inner) || IPV6.test(inner);
  }
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  return name.length > 0 && name.length <= 253 && name.split('.').every((label) => LABEL.test(label));
}

/** Why `value` cannot be the EHLO name, or `undefined` when it can. */
export function heloHostProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (CONTROL.test(value) || LONE_SURROGATE.test(value)) return 'must not contain control characters';
  if (!isDomainOrLiteral(value)) {
    return 'must be a host name (letters, digits, hyphens and dots, at most 253 characters) or an address literal such as [192.0.2.1]';
  }
  return undefined;
}

/** Why `value` cannot be the envelope sender, or `undefined` when it can. */
export function mailFromProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (CONTROL.test(value) || LONE_SURROGATE.test(value)) return 'must not contain control characters';
  if (/[\s<>]/.test(value)) return 'must not contain white space, < or >';
  if (new TextEncoder().encode(value).length > MAX_PATH) return `must be at most ${MAX_PATH} octets`;
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1) return 'must be an address: local@domain';
  if (!isDomainOrLiteral(value.slice(at + 1)))
    return 'must have a host name or an address literal after the @';
  return undefined;
}
