import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { disposableDomains } from '../../src/data/disposable.js';
import { DOMAIN_ANSWERS_CACHE_SIZE, domainAnswers } from '../../src/data/domain-answers.js';
import { freeDomains } from '../../src/data/free.js';
import type { ListPatch } from '../../src/options.js';

/** The answers computed without the memo. */
function direct(
  domain: string,
  unicodeDomain: string,
  disposable = disposableDomains(),
  free = freeDomains(),
) {
  const idn = unicodeDomain !== domain;
  return {
    disposable: disposable.matches(domain) || (idn && disposable.matches(unicodeDomain)),
    free: free.has(domain) || (idn && free.has(unicodeDomain)),
  };
}

describe('domainAnswers', () => {
  it('answers as the lists do, first and from the memo, for listed, parent-listed and unlisted domains', () => {
    const built = [disposableDomains(), freeDomains()] as const;
    for (const domain of [
      'gmail.com',
      'mailinator.com',
      'x.y.mailinator.com',
      'example.com',
      'com',
      'yahoo.co.uk',
    ]) {
      const first = domainAnswers(...built, domain, domain);
      expect(first).toEqual(direct(domain, domain));
      expect(domainAnswers(...built, domain, domain)).toBe(first);
    }
    expect(domainAnswers(...built, 'gmail.com', 'gmail.com')).toEqual({ disposable: false, free: true });
    expect(domainAnswers(...built, 'x.y.mailinator.com', 'x.y.mailinator.com')).toMatchObject({
      disposable: true,
    });
  });

  it('looks up the Unicode form of an IDN too, and keys it apart from the ASCII form alone', () => {
    const disposable = disposableDomains(['xn--bcher-kva.example']);
    const free = freeDomains(['bücher.example']);
    expect(domainAnswers(disposable, free, 'xn--bcher-kva.example', 'bücher.example')).toEqual({
      disposable: true,
      free: true,
    });
    expect(
      domainAnswers(disposable, freeDomains(), 'xn--bcher-kva.example', 'xn--bcher-kva.example'),
    ).toEqual({
      disposable: true,
      free: false,
    });
  });

  it('keeps one memo per pair of lists: a patched list answers for itself, the built-in lists are unaffected', () => {
    const patch: ListPatch = { add: ['corp.example'] };
    expect(domainAnswers(disposableDomains(), freeDomains(), 'corp.example', 'corp.example').free).toBe(
      false,
    );
    expect(domainAnswers(disposableDomains(), freeDomains(patch), 'corp.example', 'corp.example').free).toBe(
      true,
    );
    expect(domainAnswers(disposableDomains(), freeDomains(), 'corp.example', 'corp.example').free).toBe(
      false,
    );
    expect(
      domainAnswers(disposableDomains(['corp.example']), freeDomains(), 'a.corp.example', 'a.corp.example'),
    ).toEqual({
      disposable: true,
      free: false,
    });
  });

  it('agrees with the lists for any domain, past the memo’s capacity', () => {
    const label = fc.stringMatching(/^[a-z0-9]{1,8}$/);
    const domain = fc.oneof(
      fc.constantFrom('gmail.com', 'mailinator.com', 'guerrillamail.com', 'outlook.com', 'proton.me'),
      fc
        .tuple(label, fc.constantFrom('mailinator.com', 'com', 'yopmail.com', 'gmail.com'))
        .map(([a, b]) => `${a}.${b}`),
    );
    fc.assert(
      fc.property(domain, (name) => {
        expect(domainAnswers(disposableDomains(), freeDomains(), name, name)).toEqual(direct(name, name));
      }),
      { numRuns: 3000 },
    );
    const many = Array.from({ length: DOMAIN_ANSWERS_CACHE_SIZE + 10 }, (_, i) => `d${i}.mailinator.com`);
    for (const name of many) domainAnswers(disposableDomains(), freeDomains(), name, name);
    for (const name of [many[0]!, many.at(-1)!, 'gmail.com']) {
      expect(domainAnswers(disposableDomains(), freeDomains(), name, name)).toEqual(direct(name, name));
    }
  });
});
