import { describe, expect, it } from 'vitest';
import { weakMemo } from '../src/weak-memo.js';

describe('weakMemo', () => {
  it('computes once per key object and returns that result after', () => {
    let calls = 0;
    const length = weakMemo((list: readonly string[]) => {
      calls += 1;
      return list.length;
    });
    const a = ['x', 'y'];
    const b = ['x', 'y'];
    expect([length(a), length(a), length(b), length(a)]).toEqual([2, 2, 2, 2]);
    expect(calls).toBe(2); // equal contents, other object: computed again
  });

  it('remembers undefined and other falsy results too', () => {
    let calls = 0;
    const nothing = weakMemo((_key: object) => {
      calls += 1;
      return undefined;
    });
    const key = {};
    expect(nothing(key)).toBeUndefined();
    expect(nothing(key)).toBeUndefined();
    expect(calls).toBe(1);
  });

  it('lets an exception through and computes again on the next call', () => {
    let calls = 0;
    const failing = weakMemo((_key: object) => {
      calls += 1;
      if (calls === 1) throw new Error('first call fails');
      return calls;
    });
    const key = {};
    expect(() => failing(key)).toThrow('first call fails');
    expect(failing(key)).toBe(2);
    expect(failing(key)).toBe(2);
  });
});
