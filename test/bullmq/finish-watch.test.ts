import { describe, expect, it } from 'vitest';
import { type EndingRecord, FinishWatch } from '../../src/bullmq/finish-watch.js';

const running = (id: string): EndingRecord => ({ id, status: 'processing', completedAt: null });
const complete = (id: string, at = 1000): EndingRecord => ({ id, status: 'complete', completedAt: at });
const failed = (id: string, at = 1000): EndingRecord => ({ id, status: 'failed', completedAt: at });
const ids = (records: readonly EndingRecord[]) => records.map((record) => `${record.status} ${record.id}`);

describe('FinishWatch', () => {
  it('owes nothing on the first listing: what ended before the node looked is not its to tell', () => {
    const watch = new FinishWatch();
    expect(ids(watch.missed([complete('a'), failed('b'), running('c')]))).toEqual([]);
    expect(ids(watch.missed([complete('a'), failed('b'), running('c')]))).toEqual([]);
  });

  it('tells the ending of a job it saw running, whose event never arrived', () => {
    const watch = new FinishWatch();
    watch.missed([running('a'), running('b')]);
    expect(ids(watch.missed([complete('a'), failed('b')]))).toEqual(['complete a', 'failed b']);
  });

  it('tells the ending of a job that appeared and ended between two listings', () => {
    const watch = new FinishWatch();
    watch.missed([]);
    expect(ids(watch.missed([complete('new')]))).toEqual(['complete new']);
  });

  it('tells an ending once, whether its event or a listing comes first', () => {
    const watch = new FinishWatch();
    watch.missed([running('a'), running('b')]);
    expect(watch.claim(complete('a'))).toBe(true); // the event arrived
    expect(ids(watch.missed([complete('a'), complete('b')]))).toEqual(['complete b']);
    expect(watch.claim(complete('b'))).toBe(true); // the listing's telling
    expect(watch.claim(complete('b'))).toBe(false); // its event, late
    expect(watch.claim(complete('a'))).toBe(false);
    expect(ids(watch.missed([complete('a'), complete('b')]))).toEqual([]);
  });

  it('owes an ending again until it is claimed (a telling that could not read the job)', () => {
    const watch = new FinishWatch();
    watch.missed([running('a')]);
    expect(ids(watch.missed([complete('a')]))).toEqual(['complete a']);
    expect(ids(watch.missed([complete('a')]))).toEqual(['complete a']);
    watch.claim(complete('a'));
    expect(ids(watch.missed([complete('a')]))).toEqual([]);
  });

  it('tells a second ending of a job reopened and finished again, also when the reopening was never listed', () => {
    const watch = new FinishWatch();
    watch.missed([running('a')]);
    watch.claim(complete('a', 1000));
    watch.running('a'); // a progress event of the reopened job
    expect(ids(watch.missed([complete('a', 2000)]))).toEqual(['complete a']);
    expect(watch.claim(complete('a', 2000))).toBe(true);
    expect(watch.claim(complete('a', 2000))).toBe(false);
  });

  it('always lets a record that has not ended be told (progress)', () => {
    const watch = new FinishWatch();
    expect(watch.claim(running('a'))).toBe(true);
    expect(watch.claim(running('a'))).toBe(true);
  });

  it('forgets the jobs that are no longer listed (deleted), so what it keeps stays bounded', () => {
    const watch = new FinishWatch();
    watch.missed([running('a')]);
    watch.claim(complete('a'));
    watch.missed([]);
    // Listed again (an id reused by a test store): a new job to this node, ended between two listings.
    expect(ids(watch.missed([complete('a')]))).toEqual(['complete a']);
  });
});
