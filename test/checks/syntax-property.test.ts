import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAddress, SYNTAX_FAILURES, type SyntaxOptions } from '../../src/checks/syntax.js';

const utf16Unit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
const nasty = fc.constantFrom(
  '@',
  '.',
  '"',
  '\\',
  '[',
  ']',
  ':',
  '-',
  ' ',
  '\r',
  '\n',
  '\0',
  '\t',
  'xn--',
  '\u200b',
);

/** Any string: full Unicode, lone surrogates, control characters, and the characters the grammar cares about. */
const anyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: utf16Unit, maxLength: 300 }),
  fc.string({
    unit: fc.oneof(nasty, fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
    maxLength: 120,
  }),
);

const anyOptions: fc.Arbitrary<SyntaxOptions> = fc.record({
  allowSmtpUtf8: fc.boolean(),
  allowQuotedLocal: fc.boolean(),
  allowDomainLiteral: fc.boolean(),
  allowTlds: fc.constantFrom([], ['test'], ['localhost', 'test']),
});

const utf8 = new TextEncoder();

const atext = fc.constantFrom(..."abcxyzABC019!#$%&'*+-/=?^_`{|}~");
const letter = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz');
const ldh = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-');
const atom = fc.string({ unit: atext, minLength: 1, maxLength: 10 });
const hostLabel = fc
  .tuple(letter, fc.string({ unit: ldh, maxLength: 12 }), letter)
  .map(([first, middle, last]) => first + middle + last)
  .filter((label) => label.slice(2, 4) !== '--');
/** Plain ASCII addresses that every rule accepts. */
const plainAddress = fc
  .tuple(
    fc.array(atom, { minLength: 1, maxLength: 3 }),
    fc.array(hostLabel, { minLength: 1, maxLength: 3 }),
    fc.constantFrom('com', 'org', 'de', 'co.uk', 'email'),
  )
  .map(([atoms, labels, tld]) => `${atoms.join('.')}@${labels.join('.')}.${tld}`);

/** Letters from many scripts and cases, compatibility forms and marks: inputs that IDNA and NFC rewrite. */
const intlChar = fc.constantFrom(
  ...'aZ09-.é\u0301üÜßẞςΣ中文жЖاש١۱ｅＥ。．Ⅻ™İıᾈꭰᎠǅﬀ\u00b7l\u30fbア'.split(''),
);
const intlAddress = fc
  .tuple(
    fc.string({ unit: intlChar, minLength: 1, maxLength: 8 }),
    fc.string({ unit: intlChar, minLength: 1, maxLength: 12 }),
  )
  .map(([local, domain]) => `${local}@${domain}.com`);

describe('parseAddress properties', () => {
  it('never throws, and always answers with a published reason or canonical parts', () => {
    fc.assert(
      fc.property(anyString, anyOptions, (input, options) => {
        const result = parseAddress(input, options);
        if (result.ok) {
          expect(result.address.normalized).toBe(`${result.address.local}@${result.address.domain}`);
        } else {
          expect(SYNTAX_FAILURES).toContain(result.reason);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('never accepts CR, LF or NUL, wherever they are and whatever the options', () => {
    fc.assert(
      fc.property(
        fc.oneof(plainAddress, anyString),
        fc.nat(),
        fc.constantFrom('\r', '\n', '\0', '\r\n'),
        anyOptions,
        (text, at, bad, options) => {
          const position = at % (text.length + 1);
          const input = text.slice(0, position) + bad + text.slice(position);
          expect(parseAddress(input, options).ok).toBe(false);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('gives results within the RFC limits, with a lower-case ASCII domain', () => {
    fc.assert(
      fc.property(fc.oneof(plainAddress, intlAddress, anyString), anyOptions, (input, options) => {
        const result = parseAddress(input, options);
        if (!result.ok) return;
        const { local, domain, normalized } = result.address;
        expect(utf8.encode(local).length).toBeLessThanOrEqual(64);
        expect(utf8.encode(normalized).length).toBeLessThanOrEqual(254);
        expect(domain).toMatch(/^[a-z0-9.\-[\]:]+$/i);
        expect(domain).toBe(domain.startsWith('[') ? domain : domain.toLowerCase());
        expect(normalized).not.toMatch(/[\r\n\0]/);
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts plain ASCII addresses, and the canonical form is a fixed point', () => {
    fc.assert(
      fc.property(plainAddress, (input) => {
        const result = parseAddress(input);
        expect(result.ok, input).toBe(true);
        if (!result.ok) return;
        expect(result.address.normalized).toBe(input);
        const again = parseAddress(result.address.normalized);
        expect(again.ok && again.address.normalized).toBe(result.address.normalized);
      }),
      { numRuns: 1000 },
    );
  });

  it('maps any accepted address to a canonical form that parses to itself, in ASCII and in Unicode form', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof(plainAddress, intlAddress, anyString), anyOptions, (input, options) => {
        const result = parseAddress(input, options);
        if (!result.ok) return;
        const { local, unicodeDomain, normalized } = result.address;
        const ascii = parseAddress(normalized, options);
        const unicode = parseAddress(`${local}@${unicodeDomain}`, options);
        expect(ascii.ok && ascii.address.normalized).toBe(normalized);
        expect(unicode.ok && unicode.address.normalized).toBe(normalized);
        if (input !== normalized) accepted++;
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(100); // enough rewritten inputs for the property to mean something
  });

  it('answers huge input without splitting it', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: utf16Unit, minLength: 1, maxLength: 20 }),
        fc.integer({ min: 2000, max: 200_000 }),
        (chunk, size) => {
          const input = chunk.repeat(Math.ceil(size / chunk.length));
          expect(parseAddress(input)).toEqual({ ok: false, reason: 'too_long', user: null, domain: null });
        },
      ),
      { numRuns: 50 },
    );
  });
});
