/**
 * Conformance with the typo-suggestion corpora of mailcheck and @zootools/email-spell-checker
 * (fixtures/corpora, see fixtures/README.md). Each vector is run twice:
 * - with the lists the upstream test used (typo-lists.json), which is where the corpus's expectations apply;
 * - with mailvet's built-in lists plus the vector's own domains as `suggestDomains` (what a user gets).
 * The vectors where mailvet answers differently on purpose are listed in DIFFERENT, with the reason.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  closestMatch,
  createDomainSuggester,
  type DomainSuggester,
  defaultSuggester,
} from '../../src/typo/suggest.js';

type ListName = 'spec' | 'default';
interface Vector {
  readonly input: string;
  readonly expected: string | null;
  readonly api: string;
  readonly lists?: Record<'domains' | 'secondLevelDomains' | 'topLevelDomains', ListName | null>;
  readonly list?: string;
  readonly note: string;
}
type Lists = Record<ListName, Record<'domains' | 'secondLevelDomains' | 'topLevelDomains', string[]>>;

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../fixtures/corpora/${name}`, import.meta.url), 'utf8'));
const allLists = fixture('typo-lists.json') as Record<'mailcheck' | 'zootools', Lists>;

/**
 * Inputs where mailvet deliberately differs from the upstream expectation, with the reason; docs/typo.md
 * repeats them. Upstream itself calls this vector an illustration of a limitation: it takes everything
 * after the first dot as the "TLD" and so cannot see that `.cmo` is a typo here.
 */
const DIFFERENT: Readonly<Record<string, string>> = {
  'test@mail.randomsmallcompany.cmo': 'test@mail.randomsmallcompany.com',
};

/** Applies a suggester to an address the way the upstream `run`/`suggest` did: trimmed, lower-cased local. */
function suggestAddress(input: string, suggester: DomainSuggester): string | null {
  const email = input.trim();
  const at = email.lastIndexOf('@');
  if (at < 0) return null;
  const domain = suggester.suggest(email.slice(at + 1));
  return domain === null ? null : `${email.slice(0, at).toLowerCase()}@${domain}`;
}

function upstreamSuggester(lists: Lists, vector: Vector): DomainSuggester {
  const pick = (kind: 'domains' | 'secondLevelDomains' | 'topLevelDomains') => {
    const name = vector.lists?.[kind];
    return name === null || name === undefined ? [] : lists[name][kind];
  };
  return createDomainSuggester({
    domains: pick('domains'),
    secondLevel: pick('secondLevelDomains'),
    topLevel: pick('topLevelDomains'),
  });
}

for (const [library, file] of [
  ['mailcheck', 'typo-mailcheck.json'],
  ['zootools', 'typo-zootools-email-spell-checker.json'],
] as const) {
  const vectors = fixture(file) as Vector[];
  const lists = allLists[library];

  describe(`${file}`, () => {
    it('has the vectors the fixture README describes', () => {
      expect(vectors.length).toBe(library === 'mailcheck' ? 41 : 22);
    });

    it('findClosestDomain: the closest candidate within two edits', () => {
      const closest = vectors.filter((vector) => vector.api === 'findClosestDomain');
      expect(closest.length).toBeGreaterThan(10);
      for (const vector of closest) {
        const [name, kind] = (vector.list ?? '').split('.') as [ListName, keyof Lists[ListName]];
        expect(closestMatch(vector.input, lists[name][kind]), vector.input).toBe(vector.expected);
      }
    });

    const addressVectors = vectors.filter((vector) => vector.api !== 'findClosestDomain');

    it('run/suggest with the upstream lists: every vector passes, except the documented differences', () => {
      expect(addressVectors.length).toBeGreaterThan(5);
      for (const vector of addressVectors) {
        const expected = DIFFERENT[vector.input] ?? vector.expected;
        expect(suggestAddress(vector.input, upstreamSuggester(lists, vector)), vector.input).toBe(expected);
      }
    });

    it("run/suggest with mailvet's built-in lists (plus the vector's domains): the same answers", () => {
      for (const vector of addressVectors) {
        const extra = vector.lists?.domains === 'spec' ? lists.spec.domains : [];
        const expected = DIFFERENT[vector.input] ?? vector.expected;
        expect(suggestAddress(vector.input, defaultSuggester().extend(extra)), vector.input).toBe(expected);
      }
    });
  });
}

describe('the documented differences', () => {
  it('are all vectors of the corpus, with a different expectation there', () => {
    const vectors = fixture('typo-mailcheck.json') as Vector[];
    for (const [input, ours] of Object.entries(DIFFERENT)) {
      const vector = vectors.find((candidate) => candidate.input === input);
      expect(vector?.expected, input).not.toBe(ours);
    }
  });
});

describe('with the zootools default lists', () => {
  it('does not turn web.com into hey.com, which those lists contain', () => {
    const suggester = createDomainSuggester({
      domains: allLists.zootools.default.domains,
      secondLevel: allLists.zootools.default.secondLevelDomains,
      topLevel: allLists.zootools.default.topLevelDomains,
    });
    expect(suggester.suggest('web.com')).toBeNull();
    expect(suggester.suggest('hey.com')).toBeNull();
  });
});
