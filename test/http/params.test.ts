import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  booleanParam,
  integerParam,
  numberParam,
  parseQuery,
  pathAndQuery,
  queryParam,
} from '../../src/http/params.js';

const url = (query: string) => new URLSearchParams(query);

describe('query parameters', () => {
  it('refuses a parameter given twice', () => {
    expect(() => queryParam(url('email=a&email=b'), 'email')).toThrow('email must be given at most once');
    expect(queryParam(url('email=a%2Bb%40x.com'), 'email')).toBe('a+b@x.com');
    expect(queryParam(url(''), 'email')).toBeNull();
  });

  it('reads integers within bounds', () => {
    expect(integerParam(url(''), 'limit', 7, 1, 10)).toBe(7);
    expect(integerParam(url('limit=10'), 'limit', 7, 1, 10)).toBe(10);
    for (const bad of ['0', '11', '-1', '1.5', '1e1', '', 'x', '0x5', ' 5', '99999999999999999999']) {
      expect(() => integerParam(url(`limit=${encodeURIComponent(bad)}`), 'limit', 7, 1, 10)).toThrow(
        'limit must be an integer from 1 to 10',
      );
    }
  });

  it('reads numbers within bounds', () => {
    expect(numberParam(url('timeout=2.5'), 'timeout', 10, 1, 60)).toBe(2.5);
    expect(numberParam(url('timeout=60'), 'timeout', 10, 1, 60)).toBe(60);
    for (const bad of ['0.5', '61', '-1', 'NaN', 'Infinity', '1e1', '', '.5', '5.']) {
      expect(() => numberParam(url(`timeout=${bad}`), 'timeout', 10, 1, 60)).toThrow(
        'timeout must be a number from 1 to 60',
      );
    }
  });

  it('reads booleans', () => {
    expect(booleanParam(url(''), 'partial')).toBe(false);
    expect(booleanParam(url('partial=true'), 'partial')).toBe(true);
    expect(booleanParam(url('partial=false'), 'partial')).toBe(false);
    expect(() => booleanParam(url('partial=1'), 'partial')).toThrow('partial must be true or false');
  });
});

describe('pathAndQuery', () => {
  it.each([
    ['http://h/v1/verify?email=a%40b.c', '/v1/verify', 'email=a@b.c'],
    ['http://h:8080/v1/bulk', '/v1/bulk', ''],
    ['https://u:p@h/a/b?x=1&y=2#frag', '/a/b', 'x=1&y=2'],
    ['http://[::1]:80/healthz?', '/healthz', ''],
    ['http://h', '/', ''],
    ['http://h?x=1', '/', 'x=1'],
    ['http://h/#a?b', '/', ''],
    ['http://h/v1/bulk/%E7%94%A8/results', '/v1/bulk/%E7%94%A8/results', ''],
    ['/v1/verify?email=a%40b.c', '/v1/verify', 'email=a@b.c'],
    ['/r?u=http://x/y', '/r', 'u=http://x/y'],
    ['//x/y?z=1', '//x/y', 'z=1'],
    ['/#a?b', '/', ''],
  ])('splits %s', (href, pathname, search) => {
    const split = pathAndQuery(href);
    expect(split.pathname).toBe(pathname);
    expect(decodeURIComponent(split.query.toString())).toBe(search);
  });

  it('agrees with URL on what a Request holds', () => {
    for (const href of [
      'http://localhost/v1/verify?email=%E7%94%A8@x.y&timeout=2',
      'http://a.b/x/./y/../z?q',
    ]) {
      const url = new URL(new Request(href).url);
      const split = pathAndQuery(new Request(href).url);
      expect(split.pathname).toBe(url.pathname);
      expect(split.query.toString()).toBe(url.searchParams.toString());
    }
  });
});

describe('parseQuery agrees with URLSearchParams', () => {
  const alphabet = [
    'a',
    'b',
    '=',
    '&',
    '+',
    '%',
    '%2',
    '%41',
    '%2B',
    '%26',
    '%3D',
    '%C3%A9',
    '%C3',
    '%E7%94%A8',
  ];
  const hostile = [
    '%ED%A0%80',
    '%C0%AF',
    '%00',
    '%zz',
    'é',
    ' ',
    '\u0000',
    '\ud800',
    '%F0%9F%98%80',
    '#',
    '?',
    'x',
  ];
  const names = ['a', 'b', '', ' ', 'a b', '+', '&', '=', 'é', 'x', 'a+', 'ab'];
  /** Whether parseQuery reads `query` as URLSearchParams does (a boolean, so that fast-check's thousands of runs
   * cost no assertion objects; a failure names the query that differs). */
  const same = (query: string): boolean => {
    const mine = parseQuery(query);
    const reference = new URLSearchParams(query);
    for (const name of [...names, ...reference.keys()]) {
      const ours = mine.getAll(name);
      const theirs = reference.getAll(name);
      if (ours.length !== theirs.length || ours.some((value, index) => value !== theirs[index])) return false;
    }
    return mine.toString() === reference.toString();
  };

  it('on queries built from tricky pieces (escapes, +, &, =, unicode, lone surrogates)', () => {
    const pieces = fc
      .array(fc.constantFrom(...alphabet, ...hostile), { maxLength: 12 })
      .map((a) => a.join(''));
    fc.assert(fc.property(pieces, same), { numRuns: 5_000 });
  });

  it('on arbitrary strings', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 60 }), same), { numRuns: 2_000 });
  });
});
