import { describe, expect, it } from 'vitest';
import { PROVIDER_SUFFIXES, providerOf, providerOfHost } from '../../src/classify/provider.js';

describe('providerOfHost', () => {
  it.each([
    ['aspmx.l.google.com', 'google'],
    ['alt1.aspmx.l.google.com.', 'google'],
    ['smtp.google.com', 'google'],
    ['example-com.mail.protection.outlook.com', 'microsoft'],
    ['hotmail-com.olc.protection.outlook.com', 'microsoft'],
    ['mta5.am0.yahoodns.net', 'yahoo'],
    ['mx.zoho.eu', 'zoho'],
    ['mail.protonmail.ch', 'proton'],
    ['us-smtp-inbound-1.mimecast.com', 'mimecast'],
    ['mx0a-00123456.pphosted.com', 'proofpoint'],
    ['d12345a.ess.barracudanetworks.com', 'barracuda'],
    ['mx01.mail.icloud.com', 'icloud'],
    ['mx.yandex.net', 'yandex'],
    ['mxs.mail.ru', 'mailru'],
    ['in1-smtp.messagingengine.com', 'fastmail'],
    ['mx00.gmx.net', 'gmx'],
    ['mx00.ionos.de', 'ionos'],
    ['mx-ha03.web.de', 'webde'],
    ['ASPMX.L.GOOGLE.COM', 'google'],
  ])('%s is %s', (host, provider) => {
    expect(providerOfHost(host)).toBe(provider);
  });

  it('matches on label boundaries only', () => {
    expect(providerOfHost('notgoogle.com')).toBeNull();
    expect(providerOfHost('google.com.evil.example')).toBeNull();
    expect(providerOfHost('mx.example.com')).toBeNull();
  });

  it('returns null for empty, oversized or non-string input', () => {
    expect(providerOfHost('')).toBeNull();
    expect(providerOfHost(`${'a.'.repeat(200)}google.com`)).toBeNull();
    expect(providerOfHost(undefined as unknown as string)).toBeNull();
  });

  it('has no suffix claimed by two providers', () => {
    const all = Object.values(PROVIDER_SUFFIXES).flat();
    expect(new Set(all).size).toBe(all.length);
  });
});

describe('providerOf', () => {
  it('takes the first MX host that names a provider', () => {
    expect(providerOf(['mx.example.com', 'eu-smtp-inbound-1.mimecast.com', 'aspmx.l.google.com'])).toBe(
      'mimecast',
    );
    expect(providerOf(['mx1.example.com', 'mx2.example.com'])).toBeNull();
    expect(providerOf([])).toBeNull();
  });
});
