import { describe, expect, it } from 'vitest';
import { pageWindow } from '../../src/console/paging.js';

describe('pageWindow', () => {
  it('pages a 10,000-row job 50 rows at a time, from offset and limit', () => {
    expect(pageWindow(10_000, 0, 50)).toEqual({
      index: 0,
      pages: 200,
      offset: 0,
      limit: 50,
      first: 1,
      last: 50,
    });
    expect(pageWindow(10_000, 199, 50)).toMatchObject({ offset: 9950, limit: 50, first: 9951, last: 10_000 });
    // A page past the end (rows were deleted) shows the last one.
    expect(pageWindow(10_000, 500, 50)).toMatchObject({ index: 199, offset: 9950 });
    expect(pageWindow(101, 2, 50)).toMatchObject({ offset: 100, limit: 1, first: 101, last: 101 });
  });

  it('pages a list the API gives oldest first from its end when the newest come first', () => {
    expect(pageWindow(45, 0, 20, true)).toMatchObject({
      pages: 3,
      offset: 25,
      limit: 20,
      first: 1,
      last: 20,
    });
    expect(pageWindow(45, 1, 20, true)).toMatchObject({ offset: 5, limit: 20, first: 21, last: 40 });
    expect(pageWindow(45, 2, 20, true)).toMatchObject({ offset: 0, limit: 5, first: 41, last: 45 });
  });

  it('has one empty page for no rows', () => {
    expect(pageWindow(0, 3, 20, true)).toEqual({
      index: 0,
      pages: 1,
      offset: 0,
      limit: 1,
      first: 0,
      last: 0,
    });
  });
});
