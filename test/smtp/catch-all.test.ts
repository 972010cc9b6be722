import { describe, expect, it } from 'vitest';
import type { CatchAllProbe } from '../../src/result.js';
import {
  catchAllOutcomeOf,
  createCatchAllCache,
  PROBE_BYTES,
  randomLocalPart,
} from '../../src/smtp/catch-all.js';
import { deferred } from '../support/deferred.js';

describe('randomLocalPart', () => {
  const real = (size: number) => globalThis.crypto.getRandomValues(new Uint8Array(size));

  it('is 24 lower-case base32 characters, different each time', () => {
    const names = new Set(Array.from({ length: 1000 }, () => randomLocalPart(real)));
    expect(names.size).toBe(1000);
    for (const name of names) expect(name).toMatch(/^[a-z2-7]{24}$/);
  });

  it('encodes all of the random bytes (all-zero and all-one bytes give the extremes)', () => {
    expect(randomLocalPart((size) => new Uint8Array(size))).toBe('a'.repeat(24));
    expect(randomLocalPart((size) => new Uint8Array(size).fill(255))).toBe('7'.repeat(24));
    const one = new Uint8Array(PROBE_BYTES);
    one[PROBE_BYTES - 1] = 1;
    expect(randomLocalPart(() => one)).toBe(`${'a'.repeat(23)}b`);
  });

  it('refuses a random source that gives too few bytes', () => {
    expect(() => randomLocalPart(() => new Uint8Array(3))).toThrow(RangeError);
    expect(() => randomLocalPart(() => [1, 2, 3] as unknown as Uint8Array)).toThrow(RangeError);
  });
});

describe('catchAllOutcomeOf', () => {
  it('reads acceptance, mailbox refusals, and everything else as inconclusive', () => {
    expect(catchAllOutcomeOf('accepted')).toBe('accepted');
    expect(catchAllOutcomeOf('mailbox_not_found')).toBe('refused');
    expect(catchAllOutcomeOf('mailbox_disabled')).toBe('refused');
    expect(catchAllOutcomeOf('mailbox_quota_exceeded')).toBe('refused');
    for (const other of [
      'greylisted',
      'antispam_system',
      'mail_server_temporary_error',
      'smtp_protocol_error',
    ] as const) {
      expect(catchAllOutcomeOf(other)).toBe('inconclusive');
    }
  });
});

describe('createCatchAllCache', () => {
  it('probes a domain once and answers later askers from the cache', async () => {
    const cache = createCatchAllCache();
    let runs = 0;
    const probe = async (): Promise<CatchAllProbe> => {
      runs += 1;
      return 'accepted';
    };
    expect(await cache.resolve('example.com', probe)).toBe('accepted');
    expect(await cache.resolve('EXAMPLE.com', probe)).toBe('accepted');
    expect(runs).toBe(1);
    expect(cache.probes()).toBe(1);
    expect(cache.peek('example.com')).toBe('accepted');
  });

  it('shares one probe between concurrent askers of a domain', async () => {
    const cache = createCatchAllCache();
    const gate = deferred<CatchAllProbe>();
    let runs = 0;
    const probe = () => {
      runs += 1;
      return gate.promise;
    };
    const answers = Promise.all(Array.from({ length: 20 }, () => cache.resolve('example.com', probe)));
    gate.resolve('refused');
    expect(await answers).toEqual(Array(20).fill('refused'));
    expect(runs).toBe(1);
  });

  it('probes each domain separately', async () => {
    const cache = createCatchAllCache();
    const seen: string[] = [];
    for (const domain of ['a.example', 'b.example', 'a.example']) {
      await cache.resolve(domain, async () => {
        seen.push(domain);
        return 'refused';
      });
    }
    expect(seen).toEqual(['a.example', 'b.example']);
  });

  it('does not cache inconclusive answers or failed probes', async () => {
    const cache = createCatchAllCache();
    let runs = 0;
    expect(
      await cache.resolve('example.com', async () => {
        runs += 1;
        return 'inconclusive';
      }),
    ).toBe('inconclusive');
    expect(
      await cache.resolve('example.com', () => {
        runs += 1;
        throw new Error('boom');
      }),
    ).toBe('inconclusive');
    expect(
      await cache.resolve('example.com', async () => {
        runs += 1;
        return 'accepted';
      }),
    ).toBe('accepted');
    expect(runs).toBe(3);
  });

  it('forgets an answer after its TTL, by the injected clock', async () => {
    let time = 1_000_000;
    const cache = createCatchAllCache({ ttlMs: 60_000, now: () => time });
    let runs = 0;
    const probe = async (): Promise<CatchAllProbe> => {
      runs += 1;
      return 'accepted';
    };
    await cache.resolve('example.com', probe);
    time += 59_999;
    await cache.resolve('example.com', probe);
    expect(runs).toBe(1);
    time += 2;
    await cache.resolve('example.com', probe);
    expect(runs).toBe(2);
  });

  it('keeps nothing with ttlMs 0, but still shares probes under way', async () => {
    const cache = createCatchAllCache({ ttlMs: 0 });
    const gate = deferred<CatchAllProbe>();
    let runs = 0;
    const probe = () => {
      runs += 1;
      return gate.promise;
    };
    const both = Promise.all([cache.resolve('example.com', probe), cache.resolve('example.com', probe)]);
    gate.resolve('accepted');
    await both;
    expect(runs).toBe(1);
    await cache.resolve('example.com', probe);
    expect(runs).toBe(2);
    expect(cache.peek('example.com')).toBeUndefined();
  });

  it('bounds how many domains it remembers', async () => {
    const cache = createCatchAllCache({ max: 2 });
    for (const domain of ['a.example', 'b.example', 'c.example'])
      await cache.resolve(domain, async () => 'refused');
    expect(cache.peek('a.example')).toBeUndefined();
    expect(cache.peek('c.example')).toBe('refused');
  });

  it('clear() forgets every answer', async () => {
    const cache = createCatchAllCache();
    await cache.resolve('example.com', async () => 'accepted');
    cache.clear();
    expect(cache.peek('example.com')).toBeUndefined();
  });

  it('rejects bad options', () => {
    expect(() => createCatchAllCache({ ttlMs: -1 })).toThrow(RangeError);
    expect(() => createCatchAllCache({ max: 0 })).toThrow(RangeError);
  });
});
