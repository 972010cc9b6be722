import { describe, expect, it } from 'vitest';
import { resultFormatOf } from '../../src/http/negotiate.js';

describe('resultFormatOf', () => {
  it('takes ?format= first, whatever Accept says', () => {
    expect(resultFormatOf('csv', 'application/json')).toBe('csv');
    expect(resultFormatOf('ndjson', null)).toBe('ndjson');
    expect(resultFormatOf('json', 'text/csv')).toBe('json');
  });

  it.each(['xml', 'CSV', '', 'toString', '__proto__'])('rejects ?format=%j', (format) => {
    expect(() => resultFormatOf(format, null)).toThrow(/format must be json, csv or ndjson/);
  });

  it.each([
    [null, 'json'],
    ['*/*', 'json'],
    ['text/csv', 'csv'],
    ['text/*', 'csv'],
    ['application/x-ndjson', 'ndjson'],
    ['application/ndjson', 'ndjson'],
    ['text/csv;q=0.5, application/x-ndjson', 'ndjson'],
    ['application/json;q=0.1, text/csv;q=0.9', 'csv'],
    ['text/csv, */*;q=0.1', 'csv'],
    ['*/*;q=0.1, text/csv;q=0', 'json'],
    ['TEXT/CSV', 'csv'],
    ['image/png', 'json'],
    ['text/html, application/xhtml+xml, */*;q=0.8', 'json'],
    ['text/csv;q=abc', 'json'],
    ['garbage;;;,,,', 'json'],
  ])('chooses from Accept %j: %s', (accept, expected) => {
    expect(resultFormatOf(null, accept)).toBe(expected);
  });
});
