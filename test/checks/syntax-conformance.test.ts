/**
 * Conformance of the syntax rules with the public corpora in fixtures/corpora (see fixtures/README.md).
 * python-email-validator's defaults are the oracle; is_email (hapi) and validator.js are compared, and every
 * disagreement is named here and explained in docs/syntax.md.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAddress, type SyntaxOptions } from '../../src/checks/syntax.js';

interface Vector {
  input: string;
  valid: boolean;
  options: Record<string, unknown>;
}

interface PythonVector extends Vector {
  expected?: { local_part?: string | null; ascii_domain?: string | null; smtputf8?: boolean | null } | null;
  default_check:
    | { valid: true; local_part: string; domain: string; ascii_domain: string; smtputf8: boolean }
    | { valid: false; error: string };
}

interface HapiVector extends Vector {
  category: 'valid' | 'rfc5321' | 'cfws' | 'deprecated' | 'rfc5322' | 'error';
}

function corpus<T>(name: string): T[] {
  return JSON.parse(readFileSync(new URL(`../../fixtures/corpora/${name}`, import.meta.url), 'utf8')) as T[];
}

const python = corpus<PythonVector>('syntax-python-email-validator.json');
const hapi = corpus<HapiVector>('syntax-isemail-hapi.json');
const validatorjs = corpus<Vector>('syntax-validatorjs.json');

/**
 * python-email-validator (non-strict) accepts local parts over RFC 5321's 64 octets; we keep the RFC limit.
 * These are every `default_check`-valid input that we reject, and the only ones.
 */
const LOCAL_OVER_64_OCTETS = [
  '11111111112222222222333333333344444444445555555555666666666677777@example.com', // 65
  '111111111122222222223333333333444444444455555555556666666666777777@example.com', // 66
  '\ufb2c111111122222222223333333333444444444455555555556666666666777777@example.com', // 69 after NFC
  'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghiklmn@iana.org', // 65
];

function verdict(input: string, options?: SyntaxOptions): boolean {
  return parseAddress(input, options).ok;
}

describe('python-email-validator: every vector, default_check as the oracle', () => {
  it('agrees on validity, except for the named 64-octet local-part vectors', () => {
    const mismatches = python
      .filter((vector) => verdict(vector.input) !== vector.default_check.valid)
      .map((vector) => vector.input);
    expect(python).toHaveLength(374);
    expect([...new Set(mismatches)].sort()).toEqual([...LOCAL_OVER_64_OCTETS].sort());
  });

  it('rejects each exception for its local-part length, which the oracle accepts', () => {
    for (const input of LOCAL_OVER_64_OCTETS) {
      expect(python.some((vector) => vector.input === input && vector.default_check.valid)).toBe(true);
      expect(parseAddress(input)).toMatchObject({ ok: false, reason: 'local_too_long' });
    }
  });

  it('gives the same local part, ASCII domain, Unicode domain and SMTPUTF8 flag on valid vectors', () => {
    const valid = python.filter(
      (vector) => vector.default_check.valid && !LOCAL_OVER_64_OCTETS.includes(vector.input),
    );
    expect(valid.length).toBeGreaterThanOrEqual(60);
    for (const vector of valid) {
      const oracle = vector.default_check;
      if (!oracle.valid) continue;
      const result = parseAddress(vector.input);
      expect(result.ok ? result.address : result, vector.input).toMatchObject({
        local: oracle.local_part,
        domain: oracle.ascii_domain,
        unicodeDomain: oracle.domain,
        smtpUtf8: oracle.smtputf8,
      });
    }
  });
});

/** The upstream options that have an equivalent here. */
const MAPPED_OPTIONS = new Set([
  'allow_smtputf8',
  'allow_quoted_local',
  'allow_domain_literal',
  'test_environment',
  'check_deliverability',
]);

function optionsOf(upstream: Record<string, unknown>): SyntaxOptions {
  return {
    allowSmtpUtf8: upstream.allow_smtputf8 !== false,
    allowQuotedLocal: upstream.allow_quoted_local === true,
    allowDomainLiteral: upstream.allow_domain_literal === true,
    allowTlds: upstream.test_environment === true ? ['test'] : [],
  };
}

describe('python-email-validator: vectors whose options map onto ours', () => {
  const mapped = python.filter((vector) =>
    Object.keys(vector.options).every((key) => MAPPED_OPTIONS.has(key)),
  );

  it('agrees with the asserted `valid`, except for the same 64-octet vectors', () => {
    const mismatches = mapped
      .filter((vector) => verdict(vector.input, optionsOf(vector.options)) !== vector.valid)
      .map((vector) => vector.input);
    expect(mapped.length).toBeGreaterThanOrEqual(300);
    expect([...new Set(mismatches)].every((input) => LOCAL_OVER_64_OCTETS.includes(input))).toBe(true);
    expect(mismatches).toHaveLength(3);
  });

  it('gives the asserted local part and ASCII domain where upstream asserts them', () => {
    let compared = 0;
    for (const vector of mapped) {
      const local = vector.expected?.local_part;
      const domain = vector.expected?.ascii_domain;
      if (!vector.valid || (local == null && domain == null)) continue;
      const result = parseAddress(vector.input, optionsOf(vector.options));
      expect(result.ok, vector.input).toBe(true);
      if (!result.ok) continue;
      if (local != null) expect(result.address.local).toBe(local);
      if (domain != null) expect(result.address.domain).toBe(domain);
      compared++;
    }
    expect(compared).toBeGreaterThanOrEqual(8);
  });
});

/**
 * Where we disagree with is_email (hapi), taking `category === 'valid'` as its verdict. All vectors run under
 * our defaults: hapi's policy options (tldWhitelist, tldBlacklist, allowUnicode, minDomainAtoms) have no
 * equivalent. Explained in docs/syntax.md.
 */
const HAPI_DISAGREEMENTS = {
  /** hapi accepts a domain without a dot; no TLD may have an MX record, so no public mailbox can live there. */
  dotlessDomain: [
    'test@io',
    'test@org',
    'person@top',
    'shouldbe@XN--UNUP4Y',
    'shouldbe@xn--unup4y',
    'shouldbe@\u6e38\u620f',
    'shouldbe@verm\u00f6gensberatung',
    'shouldbe@xn--vermgensberatung-pwb',
    'shouldbe@XN--VERMGENSBERATUNG-PWB',
  ],
  /** Emoji are not PVALID in IDNA2008, so no registry can issue such a label. */
  idna2008Symbol: [`test@${'\u{1f606}'.repeat(17)}.org`],
  /** U+103FF is unassigned. */
  unassignedCodePoint: [
    'test@\u{103ff}\u00f1o\u00f1\u00f3\u90f5\u4ef6\u00f1o\u00f1\u00f3\u90f5\u4ef6.\u90f5\u4ef6\u00f1o\u00f1\u00f3\u90f5\u4ef6\u00f1o\u00f1\u00f3\u90f5\u4ef6.\u00f1o\u00f1\u00f3\u90f5\u4ef6\u00f1o\u00f1\u00f3\u90f5\u4ef6.\u00f1o\u00f1\u00f3\u90f5\u4ef6\u00f1o\u00f1\u00f3\u90f5\u4ef6.\u00f1o\u00f1\u00f3\u90f5\u4ef6\u00f1o\u00f1\u00f3\u90f5\u4ef6.\u00f1o\u00f1\u00f3\u90f5\u4ef6\u00f1o\u00f1\u00f3\u90f5\u4ef6.\u00f1o\u00f1\u00f3\u90f5\u4ef6\u00f1o\u00f1\u00f3\u90f5\u4ef6.no\u00f1\u00f3\u90f5\u4ef6.\u5546\u52d9',
  ],
  /** Invalid in hapi only under a policy option (a TLD allow-list, allowUnicode: false); valid syntax here. */
  hapiPolicyOption: [
    'apple-touch-icon-60x60@2x.png',
    '\u00fc\u00f1\u00ef\u00e7\u00f8\u2202\u00e9@example.com',
    'unicode@ex\u00e3mple.com',
  ],
};

describe('is_email (hapi): agreement', () => {
  it('disagrees on exactly the documented vectors', () => {
    const disagreements = hapi
      .filter((vector) => verdict(vector.input) !== (vector.category === 'valid'))
      .map((vector) => vector.input);
    expect(hapi).toHaveLength(240);
    expect(disagreements.sort()).toEqual(Object.values(HAPI_DISAGREEMENTS).flat().sort());
    // 226 of 240 agree.
    expect(hapi.length - disagreements.length).toBe(226);
  });

  it('accepts none of the categories that cannot be used in an SMTP envelope', () => {
    const accepted = hapi.filter((vector) => vector.category !== 'valid' && verdict(vector.input));
    expect(accepted.map((vector) => vector.input).sort()).toEqual(
      [...HAPI_DISAGREEMENTS.hapiPolicyOption].sort(),
    );
  });
});

/** Where we disagree with validator.js's `isEmail()` defaults (explained in docs/syntax.md). */
const VALIDATORJS_DISAGREEMENTS = {
  /** validator.js accepts quoted local parts by default; we do so only with `allowQuotedLocal`. */
  quotedLocalPart: ['"foobar"@example.com', '"  foo  m\u7aefller "@example.com', '"foo\\@bar"@example.com'],
  /** UTS #46 maps full-width letters to ASCII (`gmail.com`), as python-email-validator does. */
  fullWidthDomain: ['somename@\uff47\uff4d\uff41\uff49\uff4c.com'],
};

describe('validator.js: agreement', () => {
  it('disagrees on exactly the documented vectors', () => {
    const disagreements = validatorjs
      .filter((vector) => verdict(vector.input) !== vector.valid)
      .map((vector) => vector.input);
    expect(validatorjs).toHaveLength(61);
    expect(disagreements.sort()).toEqual(Object.values(VALIDATORJS_DISAGREEMENTS).flat().sort());
  });

  it('agrees on the quoted ones once quoted local parts are allowed', () => {
    for (const input of VALIDATORJS_DISAGREEMENTS.quotedLocalPart) {
      expect(verdict(input, { allowQuotedLocal: true })).toBe(true);
    }
  });
});
