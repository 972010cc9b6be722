import { describe, expect, it } from 'vitest';
import { memoryJobStore } from '../../src/bulk/memory-store.js';
import type { JobRecord } from '../../src/bulk/types.js';
import { jobStoreContract } from '../../src/testing/job-store-contract.js';
import { resultFor } from './support.js';

jobStoreContract('memoryJobStore', () => ({ store: memoryJobStore() }));

describe('memoryJobStore beyond the contract', () => {
  it('keeps the first write of a position, and refuses an unknown job and mismatched arrays', () => {
    const store = memoryJobStore();
    store.saveJob({ id: 'j' } as JobRecord);
    store.putResults('j', [0], [resultFor('a@x.example')]);
    store.putResults('j', [0], [resultFor('b@x.example')]);
    expect(store.getResults('j', 0, 1)).toEqual([resultFor('a@x.example')]);
    expect(() => store.putResults('nope', [0], [resultFor('a@x.example')])).toThrow(RangeError);
    expect(() => store.putResults('j', [1, 2], [resultFor('a@x.example')])).toThrow(/differ in length/);
  });
});
