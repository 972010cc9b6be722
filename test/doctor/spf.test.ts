import { describe, expect, it } from 'vitest';
import type { Resolver } from '../../src/dns/types.js';
import { evaluateSpf } from '../../src/doctor/spf.js';
import { staticResolver } from '../../src/testing/static-resolver.js';
import type { Zone } from '../../src/testing/zone.js';

const IP = '203.0.113.7';

function spf(zone: Zone, ip = IP, domain = 'sender.test') {
  return evaluateSpf(ip, domain, { resolver: staticResolver(zone) });
}

describe('evaluateSpf: mechanisms and qualifiers', () => {
  it('passes an address inside an ip4: range and names the term', async () => {
    const result = await spf({ 'sender.test': { txt: ['v=spf1 ip4:203.0.113.0/24 -all'] } });
    expect(result).toMatchObject({ result: 'pass', matched: 'ip4:203.0.113.0/24', lookups: 0 });
    expect(result.record).toBe('v=spf1 ip4:203.0.113.0/24 -all');
  });

  it('fails an address outside every range when the record ends -all', async () => {
    const result = await spf({ 'sender.test': { txt: ['v=spf1 ip4:198.51.100.0/24 ip4:203.0.113.8 -all'] } });
    expect(result).toMatchObject({ result: 'fail', matched: '-all' });
  });

  it('gives softfail for ~all, neutral for ?all and for a record without a match', async () => {
    expect((await spf({ 'sender.test': { txt: ['v=spf1 ~all'] } })).result).toBe('softfail');
    expect((await spf({ 'sender.test': { txt: ['v=spf1 ?all'] } })).result).toBe('neutral');
    expect((await spf({ 'sender.test': { txt: ['v=spf1 ip4:192.0.2.1'] } })).result).toBe('neutral');
  });

  it('follows include: and matches the ranges of the included record', async () => {
    const zone: Zone = {
      'sender.test': { txt: ['v=spf1 include:_spf.provider.test include:_spf2.provider.test -all'] },
      '_spf.provider.test': { txt: ['v=spf1 ip4:198.51.100.0/24 ~all'] },
      '_spf2.provider.test': { txt: ['v=spf1 ip6:2001:db8::/32 ip4:203.0.112.0/23 -all'] },
    };
    const result = await spf(zone);
    expect(result).toMatchObject({ result: 'pass', matched: 'include:_spf2.provider.test', lookups: 2 });
    expect((await spf(zone, '192.0.2.1')).result).toBe('fail');
  });

  it('matches ip6: ranges for IPv6 clients and never an IPv4 range', async () => {
    const zone: Zone = { 'sender.test': { txt: ['v=spf1 ip4:0.0.0.0/0 ip6:2001:db8:1::/48 -all'] } };
    expect((await spf(zone, '2001:db8:1::25')).result).toBe('pass');
    expect((await spf(zone, '2001:db8:2::25')).result).toBe('fail');
  });

  it('evaluates a and mx, with CIDR lengths', async () => {
    const zone: Zone = {
      'sender.test': { txt: ['v=spf1 a mx:mail.test/24 -all'], a: ['192.0.2.10'] },
      'mail.test': { mx: [{ priority: 10, exchange: 'mx.mail.test' }] },
      'mx.mail.test': { a: ['203.0.113.200'] },
    };
    expect(await spf(zone)).toMatchObject({ result: 'pass', matched: 'mx:mail.test/24', lookups: 2 });
    expect((await spf(zone, '192.0.2.10')).result).toBe('pass');
    expect((await spf(zone, '192.0.2.11')).result).toBe('fail');
  });

  it('follows redirect= when no mechanism matched', async () => {
    const zone: Zone = {
      'sender.test': { txt: ['v=spf1 ip4:192.0.2.1 redirect=_spf.other.test'] },
      '_spf.other.test': { txt: ['v=spf1 ip4:203.0.113.0/28 -all'] },
    };
    expect(await spf(zone)).toMatchObject({ result: 'pass', matched: 'ip4:203.0.113.0/28' });
    expect((await spf(zone, '198.51.100.1')).result).toBe('fail');
  });
});

describe('evaluateSpf: errors and limits', () => {
  it('answers none without a record, permerror with two', async () => {
    expect((await spf({ 'sender.test': { txt: ['google-site-verification=x'] } })).result).toBe('none');
    expect((await spf({})).result).toBe('none');
    const two = await spf({ 'sender.test': { txt: ['v=spf1 -all', 'v=spf1 +all'] } });
    expect(two.result).toBe('permerror');
    expect(two.reason).toContain('2 SPF records');
  });

  it('gives permerror past 10 DNS-querying terms', async () => {
    const zone: Record<string, { txt: string[] }> = {};
    for (let index = 0; index < 12; index++) {
      zone[index === 0 ? 'sender.test' : `l${index}.test`] = {
        txt: [`v=spf1 include:l${index + 1}.test -all`],
      };
    }
    zone['l12.test'] = { txt: [`v=spf1 ip4:${IP} -all`] };
    const result = await spf(zone);
    expect(result.result).toBe('permerror');
    expect(result.reason).toContain('more than 10');
    expect(result.lookups).toBe(11);
  });

  it('gives permerror past 2 void lookups', async () => {
    const result = await spf({ 'sender.test': { txt: ['v=spf1 a:x1.test a:x2.test a:x3.test -all'] } });
    expect(result).toMatchObject({ result: 'permerror' });
    expect(result.reason).toContain('more than 2 lookups found nothing');
  });

  it('gives permerror for a syntax error anywhere, even after a matching term', async () => {
    for (const record of [
      `v=spf1 ip4:${IP} foo -all`,
      'v=spf1 ip4:300.0.0.1 -all',
      'v=spf1 ip4:2001:db8::1 -all',
      'v=spf1 include: -all',
      'v=spf1 a:/24 -all',
      'v=spf1 all:x',
      'v=spf1 redirect=a.test redirect=b.test',
      'v=spf1 include:exämple.test -all',
    ]) {
      expect((await spf({ 'sender.test': { txt: [record] } })).result, record).toBe('permerror');
    }
  });

  it('gives permerror when an include or redirect target has no record', async () => {
    expect(
      (await spf({ 'sender.test': { txt: ['v=spf1 include:none.test -all'] }, 'none.test': {} })).result,
    ).toBe('permerror');
    expect(
      (await spf({ 'sender.test': { txt: ['v=spf1 redirect=none.test'] }, 'none.test': {} })).result,
    ).toBe('permerror');
  });

  it('says unsupported for macros, ptr and exists reached before a match, and decides when a match comes first', async () => {
    for (const record of [
      'v=spf1 ptr -all',
      'v=spf1 exists:%{i}.spf.test -all',
      'v=spf1 include:%{d}.x.test -all',
    ]) {
      expect((await spf({ 'sender.test': { txt: [record] } })).result, record).toBe('unsupported');
    }
    expect((await spf({ 'sender.test': { txt: [`v=spf1 ip4:${IP} ptr -all`] } })).result).toBe('pass');
  });

  it('gives temperror when DNS fails, and unsupported without txt()', async () => {
    expect((await spf({ 'sender.test': { fail: 'servfail' } })).result).toBe('temperror');
    expect(
      (
        await spf({
          'sender.test': { txt: ['v=spf1 include:down.test -all'] },
          'down.test': { fail: 'timeout' },
        })
      ).result,
    ).toBe('temperror');
    const older: Resolver = {
      mx: async () => ({ kind: 'nodata' }),
      addresses: async () => ({ kind: 'nodata' }),
    };
    expect((await evaluateSpf(IP, 'sender.test', { resolver: older })).result).toBe('unsupported');
  });

  it('refuses a bad client address or domain without a lookup', async () => {
    const resolver = staticResolver({});
    expect((await evaluateSpf('not-an-ip', 'sender.test', { resolver })).result).toBe('permerror');
    expect((await evaluateSpf(IP, 'bad domain', { resolver })).result).toBe('none');
    expect((await evaluateSpf(IP, 'x'.repeat(100_000), { resolver })).result).toBe('none');
    expect(resolver.lookups).toEqual([]);
  });

  it('refuses an oversized record', async () => {
    const record = `v=spf1 ${'ip4:192.0.2.1 '.repeat(400)}-all`;
    expect((await spf({ 'sender.test': { txt: [record] } })).result).toBe('permerror');
  });
});
