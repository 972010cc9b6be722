/**
 * Types for the `punycode` package's CommonJS entry (`punycode/punycode.js`), which ships none.
 * Only the two functions the syntax check uses are declared.
 */
declare module 'punycode/punycode.js' {
  /** The RFC 3492 converter. Both functions throw a `RangeError` on malformed input. */
  const punycode: {
    /** Punycode (without `xn--`) to Unicode. */
    decode(input: string): string;
    /** Unicode to Punycode (without `xn--`). */
    encode(input: string): string;
  };
  export default punycode;
}
