/**
 * `resultJson` and `wireResultJson` write the very text `JSON.stringify` writes: for results the verifier makes
 * (over the syntax corpora's hostile inputs, with reasons and transcripts), for generated results with any
 * unicode (quotes, control characters, lone surrogates), and for objects of other shapes, which they hand to
 * `JSON.stringify`.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { wireResult, wireResultJson } from '../src/http/wire.js';
import { RESULT_FIELDS, STATUSES, SUB_STATUSES, type VerificationResult } from '../src/result.js';
import { resultJson } from '../src/result-json.js';
import { createVerifier } from '../src/verifier.js';

function expectSameText(result: VerificationResult): void {
  expect(resultJson(result)).toBe(JSON.stringify(result));
  expect(wireResultJson(result)).toBe(JSON.stringify(wireResult(result)));
}

const text = fc.string({ unit: 'binary', maxLength: 40 });
const anyText = fc.oneof(
  text,
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({
    unit: fc.constantFrom('"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', '\ud800', '\udc00', 'a'),
    maxLength: 12,
  }),
);
const nullableText = fc.option(anyText, { nil: null });

/** A result of the verifier's shape, field by field in wire order, with arbitrary text in every string. */
const resultArbitrary = fc
  .record({
    email: anyText,
    normalized: nullableText,
    user: nullableText,
    domain: nullableText,
    status: fc.oneof(fc.constantFrom(...STATUSES), anyText),
    sub_status: fc.oneof(fc.constantFrom(...SUB_STATUSES, null), anyText),
    score: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.double({ noNaN: true, noDefaultInfinity: true })),
    disposable: fc.boolean(),
    role: fc.boolean(),
    free: fc.boolean(),
    accept_all: fc.boolean(),
    did_you_mean: nullableText,
    mx_record: nullableText,
    smtp_provider: nullableText,
    reason: fc.option(anyText, { nil: undefined }),
    smtp_transcript: fc.option(fc.array(anyText, { maxLength: 4 }), { nil: undefined }),
  })
  .map(({ reason, smtp_transcript, ...fields }) => {
    const result = fields as VerificationResult;
    if (reason !== undefined) result.reason = reason;
    if (smtp_transcript !== undefined) result.smtp_transcript = smtp_transcript;
    return result;
  });

/** A result of an address without MX, as the verifier makes it offline. */
const base = (): VerificationResult => ({
  email: 'a@b.c',
  normalized: 'a@b.c',
  user: 'a',
  domain: null,
  status: 'unknown',
  sub_status: 'smtp_not_checked',
  score: 40,
  disposable: false,
  role: false,
  free: false,
  accept_all: false,
  did_you_mean: null,
  mx_record: null,
  smtp_provider: null,
});

describe('resultJson and wireResultJson', () => {
  it('write the text JSON.stringify writes, for generated results with any unicode', () => {
    fc.assert(fc.property(resultArbitrary, expectSameText), { numRuns: 5000 });
  });

  it('write the text JSON.stringify writes when the user and the domain are cut from the address', () => {
    // Where they are a prefix or a suffix of a plain address, they are written without a scan of their own.
    const cut = fc
      .record({
        address: anyText,
        other: anyText,
        normalizedIsEmail: fc.boolean(),
        userEnd: fc.nat(),
        domainStart: fc.nat(),
        result: resultArbitrary,
      })
      .map(({ address, other, normalizedIsEmail, userEnd, domainStart, result }) => ({
        ...result,
        email: normalizedIsEmail ? address : other,
        normalized: address,
        user: address.slice(0, userEnd % (address.length + 1)),
        domain: address.slice(domainStart % (address.length + 1)),
      }));
    fc.assert(fc.property(cut, expectSameText), { numRuns: 5000 });
    expectSameText({ ...base(), email: 'a"b@c', normalized: 'a"b@c', user: 'a"b', domain: 'c' });
    expectSameText({ ...base(), email: 'x@\ud83d\ude00', normalized: 'x@\ud83d\ude00', domain: '\ud83d' });
    expectSameText({ ...base(), email: 'ab@c', normalized: 'ab@c', user: 'a\u0000', domain: 'b@c\n' });
  });

  it('write the text JSON.stringify writes, for what the verifier makes of the syntax corpora and hostile input', async () => {
    const inputs = [
      'syntax-isemail-hapi.json',
      'syntax-python-email-validator.json',
      'syntax-validatorjs.json',
    ]
      .flatMap((name) =>
        (
          JSON.parse(readFileSync(new URL(`../fixtures/corpora/${name}`, import.meta.url), 'utf8')) as {
            input: string;
          }[]
        ).map((vector) => vector.input),
      )
      .concat([
        'jane@gmail.co',
        'info@example.com',
        'a"b\\c@example.com',
        'x\u0000y@example.com',
        '\ud800@example.com',
        'José.Ñandú@bücher.de',
        '用户@例子.广告',
        `${'a'.repeat(300)}@example.com`,
        'user@yahoo.co.k',
        'someone@mailinator.com',
      ]);
    const verifier = createVerifier({ dns: false, smtp: false });
    try {
      for (const input of inputs) expectSameText(await verifier.verify(input));
    } finally {
      await verifier.dispose();
    }
    expect(inputs.length).toBeGreaterThan(500);
  });

  it('write JSON.stringify text for results with a reason and an SMTP transcript', () => {
    const result: VerificationResult = {
      email: 'jane@example.com',
      normalized: 'jane@example.com',
      user: 'jane',
      domain: 'example.com',
      status: 'invalid',
      sub_status: 'mailbox_not_found',
      score: 0,
      disposable: false,
      role: false,
      free: false,
      accept_all: false,
      did_you_mean: null,
      mx_record: 'mx.example.com',
      smtp_provider: null,
      reason: '550 5.1.1 "jane" unknown\r\n',
      smtp_transcript: ['> RCPT TO:<jane@example.com>', '< 550 5.1.1 <jane@example.com>: \t unknown'],
    };
    expectSameText(result);
    expect(JSON.parse(resultJson(result))).toEqual(result);
  });

  describe('hand any other shape to JSON.stringify', () => {
    const shapes: Record<string, () => unknown> = {
      'an extra field': () => ({ ...base(), source: 'crm' }),
      'a field set to undefined': () => ({ ...base(), reason: undefined }),
      'a missing field': () => {
        const { smtp_provider: _, ...rest } = base();
        return rest;
      },
      'a non-finite score': () => ({ ...base(), score: Number.NaN }),
      'a string score': () => ({ ...base(), score: '40' }),
      'a boolean as a string': () => ({ ...base(), free: 'true' }),
      'a String object': () => ({ ...base(), email: new String('a@b.c') }),
      'a reason that is not a string': () => ({ ...base(), reason: 42 }),
      'a transcript that is not an array': () => ({ ...base(), smtp_transcript: 'x' }),
      'an own toJSON': () => ({ ...base(), toJSON: () => ({ replaced: true }) }),
      'a class instance': () =>
        Object.assign(
          new (class Result {
            toJSON() {
              return { replaced: true };
            }
          })(),
          base(),
        ),
      'a null prototype': () => Object.assign(Object.create(null), base()),
    };
    for (const [name, make] of Object.entries(shapes)) {
      it(name, () => {
        const odd = make() as VerificationResult;
        expect(resultJson(odd)).toBe(JSON.stringify(odd));
        expect(wireResultJson(odd)).toBe(JSON.stringify(wireResult(odd)));
      });
    }
  });

  it('write the fields in wire order for a result of the right shape built in another order', () => {
    const values: Record<string, unknown> = { ...base(), free: true };
    const reordered = Object.fromEntries([...RESULT_FIELDS].reverse().map((field) => [field, values[field]]));
    const text = resultJson(reordered as unknown as VerificationResult);
    expect(Object.keys(JSON.parse(text))).toEqual([...RESULT_FIELDS]);
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(reordered)));
  });
});
