import { describe, expect, it } from 'vitest';
import { resolverContract } from '../../src/testing/resolver-contract.js';
import { staticResolver } from '../../src/testing/static-resolver.js';

resolverContract('staticResolver', (zone) => ({ resolver: staticResolver(zone) }));

describe('staticResolver', () => {
  it('records every record lookup it serves, addresses() as A then AAAA', async () => {
    const resolver = staticResolver({ 'example.test': { a: ['192.0.2.1'] } });
    await resolver.mx('example.test');
    await resolver.addresses('Example.Test.');
    expect(resolver.lookups).toEqual([
      { name: 'example.test', type: 'MX' },
      { name: 'example.test', type: 'A' },
      { name: 'example.test', type: 'AAAA' },
    ]);
  });

  it('makes no lookup for a malformed name', async () => {
    const resolver = staticResolver({});
    await expect(resolver.mx('bad name')).rejects.toMatchObject({ reason: 'malformed' });
    expect(resolver.lookups).toEqual([]);
  });

  it('bounds the records of an answer, keeping the most preferred MX', async () => {
    const mx = Array.from({ length: 10 }, (_, index) => ({
      priority: 10 - index,
      exchange: `mx${index}.test`,
    }));
    const resolver = staticResolver(
      { 'big.test': { mx }, 'host.test': { a: ['192.0.2.1', '192.0.2.2', '192.0.2.3'] } },
      { maxRecords: 2 },
    );
    expect(await resolver.mx('big.test')).toMatchObject({
      records: [
        { priority: 1, exchange: 'mx9.test' },
        { priority: 2, exchange: 'mx8.test' },
      ],
    });
    expect(await resolver.addresses('host.test')).toMatchObject({ records: ['192.0.2.1', '192.0.2.2'] });
  });

  it('answers SERVFAIL for a CNAME loop', async () => {
    const resolver = staticResolver({ 'a.test': { cname: 'b.test' }, 'b.test': { cname: 'a.test' } });
    await expect(resolver.addresses('a.test')).rejects.toMatchObject({ reason: 'servfail' });
  });

  it('answers nxdomain for a name that fails with nxdomain, and a CNAME to a missing name', async () => {
    const resolver = staticResolver({
      'gone.test': { fail: 'nxdomain' },
      'dangling.test': { cname: 'nowhere.test' },
    });
    expect(await resolver.mx('gone.test')).toEqual({ kind: 'nxdomain' });
    expect(await resolver.addresses('dangling.test')).toEqual({ kind: 'nxdomain' });
  });
});
