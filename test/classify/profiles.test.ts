import { describe, expect, it } from 'vitest';
import { PROVIDER_PROFILES, profileOfHost } from '../../src/classify/profiles.js';
import { providerOfHost } from '../../src/classify/provider.js';

describe('profileOfHost', () => {
  it.each([
    ['contoso-com.mail.protection.outlook.com', 'microsoft365'],
    ['CONTOSO-COM.MAIL.PROTECTION.OUTLOOK.COM.', 'microsoft365'],
    ['hotmail-com.olc.protection.outlook.com', 'outlook'],
    ['mx1.hotmail.com', 'outlook'],
    ['aspmx.l.google.com', 'google'],
    ['mta5.am0.yahoodns.net', 'yahoo'],
    ['mx-aol.mail.gm0.yahoodns.net', 'yahoo'],
    ['mx01.mail.icloud.com', 'icloud'],
    ['mx0a-00123456.pphosted.com', 'proofpoint'],
    ['eu-smtp-inbound-1.mimecast.com', 'mimecast'],
    ['d12345a.ess.barracudanetworks.com', 'barracuda'],
    ['mx1.hc1234-56.iphmx.com', 'cisco'],
    ['cluster1.eu.messagelabs.com', 'broadcom'],
    ['in.hes.trendmicro.com', 'trendmicro'],
  ])('%s is %s', (host, id) => {
    expect(profileOfHost(host)?.id).toBe(id);
  });

  it('matches on label boundaries only, and refuses junk', () => {
    expect(profileOfHost('notgoogle.com')).toBeNull();
    expect(profileOfHost('protection.outlook.com.evil.example')).toBeNull();
    expect(profileOfHost('')).toBeNull();
    expect(profileOfHost('a'.repeat(300))).toBeNull();
  });

  it('names for every MX suffix a provider that smtp_provider reports too', () => {
    for (const profile of PROVIDER_PROFILES) {
      for (const suffix of profile.mxSuffixes) expect(providerOfHost(`mx.${suffix}`), suffix).not.toBeNull();
    }
  });
});
