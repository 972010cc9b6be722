import { describe, expect, it } from 'vitest';
import type { LookupOptions, Resolver } from '../../src/dns/types.js';
import { memoryKnownResults } from '../../src/known/memory.js';
import { type KnownResults, knownKey } from '../../src/known/types.js';
import { happyReply, scriptedTransport } from '../../src/testing/scripted-channel.js';
import { staticResolver } from '../../src/testing/static-resolver.js';
import { createVerifier } from '../../src/verifier.js';
import { deferred } from '../support/deferred.js';
import { VALID } from './support.js';

const ZONE = {
  'known.test': { mx: [{ priority: 10, exchange: 'mx.known.test' }] },
  'mx.known.test': { a: ['192.0.2.25'] },
  'gone.test': {},
};

/** A resolver over {@link ZONE} whose MX lookups wait for `gate`, telling `asked` when one starts. */
function heldResolver(gate: Promise<void>, asked: () => void): Resolver {
  const inner = staticResolver(ZONE);
  return {
    ...inner,
    async mx(domain: string, options?: LookupOptions) {
      asked();
      await gate;
      return inner.mx(domain, options);
    },
  };
}

/** A memory store holding a valid verdict for `addresses`, which tells `looked` the keys of each lookup. */
async function keeping(addresses: readonly string[], looked: (keys: readonly string[]) => void) {
  const inner = memoryKnownResults();
  await inner.set(
    addresses.map((address) => ({
      key: knownKey('', address),
      verdict: { ...VALID, mx_record: 'mx.known.test' },
      checkedAt: Date.now() - 1000,
      ttlMs: 3_600_000,
    })),
  );
  const known: KnownResults = {
    get(keys) {
      looked(keys);
      return inner.get(keys);
    },
    set: (entries) => inner.set(entries),
  };
  return known;
}

describe('the known-results lookup', () => {
  it('starts while the MX lookup is under way, and a kept verdict then opens no SMTP session', async () => {
    const mxGate = deferred();
    const mxAsked = deferred();
    const looked = deferred<readonly string[]>();
    const transport = scriptedTransport(() => ({ respond: happyReply }));
    const verifier = createVerifier({
      resolver: heldResolver(mxGate.promise, mxAsked.resolve),
      transport,
      allowAddresses: ['192.0.2.0/24'],
      allowTlds: ['test'],
      knownResults: await keeping(['jane@known.test'], looked.resolve),
    });
    try {
      const result = verifier.verify('jane@known.test');
      await mxAsked.promise;
      // The MX lookup has not answered (its gate is closed), and the store has been asked already.
      expect(await looked.promise).toEqual([knownKey('', 'jane@known.test')]);
      mxGate.resolve();
      expect(await result).toMatchObject({ status: 'valid', mx_record: 'mx.known.test' });
      expect(transport.targets).toEqual([]);
    } finally {
      await verifier.dispose();
    }
  });

  it('lets the MX check decide first: a domain without mail hosts is not answered from what was kept', async () => {
    const verifier = createVerifier({
      resolver: staticResolver(ZONE),
      transport: scriptedTransport(() => ({ respond: happyReply })),
      allowTlds: ['test'],
      knownResults: await keeping(['jane@gone.test'], () => {}),
    });
    try {
      expect((await verifier.verify('jane@gone.test')).status).not.toBe('valid');
    } finally {
      await verifier.dispose();
    }
  });

  it('asks the store nothing for a fresh verification, and asks the mail server', async () => {
    const keys: string[] = [];
    const transport = scriptedTransport(() => ({ respond: happyReply }));
    const verifier = createVerifier({
      resolver: staticResolver(ZONE),
      transport,
      allowAddresses: ['192.0.2.0/24'],
      allowTlds: ['test'],
      catchAll: false,
      knownResults: await keeping(['jane@known.test'], (asked) => keys.push(...asked)),
    });
    try {
      expect((await verifier.verify('jane@known.test', { fresh: true })).status).toBe('valid');
      expect(keys).toEqual([]);
      expect(transport.targets.length).toBe(1);
    } finally {
      await verifier.dispose();
    }
  });
});
