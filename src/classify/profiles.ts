/**
 * Provider profiles: what the replies of a known receiving provider mean, whether it accepts every recipient at
 * `RCPT TO`, and how it rate-limits. Pure data; docs/providers.md is the same table in words.
 * @module
 */

/** Identifier of a provider profile (finer than `smtp_provider`: Microsoft 365 and Outlook.com differ). */
export type ProviderProfileId =
  | 'google'
  | 'microsoft365'
  | 'outlook'
  | 'yahoo'
  | 'icloud'
  | 'proofpoint'
  | 'mimecast'
  | 'barracuda'
  | 'cisco'
  | 'broadcom'
  | 'trendmicro';

/** What mailvet knows about one receiving provider. */
export interface ProviderProfile {
  /** Stable identifier. */
  readonly id: ProviderProfileId;
  /** Display name, for docs and `reason`. */
  readonly name: string;
  /**
   * MX host-name suffixes, matched on label boundaries (`mail.protection.outlook.com` matches
   * `contoso-com.mail.protection.outlook.com`); the longest matching suffix of all profiles wins.
   */
  readonly mxSuffixes: readonly string[];
  /**
   * True when the provider answers `250` to every recipient at `RCPT TO` and bounces unknown ones later: a `250`
   * alone then proves nothing, and mailvet never calls such an address `valid`.
   */
  readonly acceptsAllAtRcpt: boolean;
  /** How the provider rate-limits, as its public documentation describes it. */
  readonly rateLimits: string;
}

/** Every known profile. */
export const PROVIDER_PROFILES: readonly ProviderProfile[] = Object.freeze([
  {
    id: 'google',
    name: 'Gmail / Google Workspace',
    mxSuffixes: ['google.com', 'googlemail.com', 'smtp.goog'],
    acceptsAllAtRcpt: false,
    rateLimits:
      '`450 4.2.1` / `550 5.2.1` "receiving mail at a rate that prevents additional messages" (per recipient), `421 4.7.0` / `421 4.7.28` for unusual rates from an IP',
  },
  {
    id: 'microsoft365',
    name: 'Microsoft 365 / Exchange Online',
    mxSuffixes: ['mail.protection.outlook.com', 'mail.eo.outlook.com'],
    acceptsAllAtRcpt: false,
    rateLimits: '`451 4.7.500-699` "Server busy", `421 4.3.2` concurrent-connection limits',
  },
  {
    id: 'outlook',
    name: 'Outlook.com / Hotmail',
    mxSuffixes: ['olc.protection.outlook.com', 'hotmail.com', 'outlook.com'],
    acceptsAllAtRcpt: false,
    rateLimits:
      '`421 RP-001` / `550 SC-004` hourly and daily limits, `421 4.7.650` reputation rate limits, `451 4.7.652` connection limits',
  },
  {
    id: 'yahoo',
    name: 'Yahoo / AOL',
    mxSuffixes: ['yahoodns.net', 'yahoo.com', 'aol.com'],
    acceptsAllAtRcpt: true,
    rateLimits:
      '`421 4.7.0 [TSS04]` deferrals for volume or complaints, `451 VS1-IP` / `421 [TSS11]` for excessive unknown recipients',
  },
  {
    id: 'icloud',
    name: 'Apple iCloud Mail',
    mxSuffixes: ['icloud.com', 'mail.me.com'],
    acceptsAllAtRcpt: false,
    rateLimits: '`421 4.7.1` "deferred due to excessive volume", `421 4.7.0` "too many errors"',
  },
  {
    id: 'proofpoint',
    name: 'Proofpoint (Enterprise and Essentials)',
    mxSuffixes: ['pphosted.com', 'ppe-hosted.com', 'proofpoint.com'],
    acceptsAllAtRcpt: false,
    rateLimits: '`451 4.7.1` temporary deferrals while the sending IP is scored',
  },
  {
    id: 'mimecast',
    name: 'Mimecast',
    mxSuffixes: ['mimecast.com', 'mimecast.co.za', 'mimecast-offshore.com'],
    acceptsAllAtRcpt: false,
    rateLimits: '`451 Internal resource temporarily unavailable` (greylisting, reputation), `421` under load',
  },
  {
    id: 'barracuda',
    name: 'Barracuda Email Security Service',
    mxSuffixes: ['barracudanetworks.com'],
    acceptsAllAtRcpt: false,
    rateLimits: '`421` rate control per sending IP',
  },
  {
    id: 'cisco',
    name: 'Cisco Secure Email (IronPort)',
    mxSuffixes: ['iphmx.com'],
    acceptsAllAtRcpt: false,
    rateLimits:
      '`452 Too many recipients received this hour` (HAT), directory-harvest prevention after invalid recipients',
  },
  {
    id: 'broadcom',
    name: 'Broadcom Email Security.cloud (MessageLabs)',
    mxSuffixes: ['messagelabs.com'],
    acceptsAllAtRcpt: false,
    rateLimits: '`421` / `451` deferrals by connection policy',
  },
  {
    id: 'trendmicro',
    name: 'Trend Micro Email Security',
    mxSuffixes: ['trendmicro.com', 'trendmicro.eu'],
    acceptsAllAtRcpt: false,
    rateLimits: '`421` / `451` deferrals by IP reputation',
  },
] satisfies ProviderProfile[]);

/** Profiles by MX suffix. */
const BY_SUFFIX: ReadonlyMap<string, ProviderProfile> = new Map(
  PROVIDER_PROFILES.flatMap((profile) => profile.mxSuffixes.map((suffix) => [suffix, profile] as const)),
);

const MAX_HOST_LENGTH = 253;

/**
 * The profile of one MX host name, or `null`: the name itself, then each shorter suffix at a label boundary, so
 * the most specific suffix wins (`x.mail.protection.outlook.com` is Microsoft 365, `x.olc.protection.outlook.com`
 * Outlook.com). Case and a trailing dot are ignored.
 * @example
 * profileOfHost('contoso-com.mail.protection.outlook.com')?.id; // 'microsoft365'
 * profileOfHost('mx.example.com'); // null
 */
export function profileOfHost(host: string): ProviderProfile | null {
  if (typeof host !== 'string' || host.length === 0 || host.length > MAX_HOST_LENGTH + 1) return null;
  const name = host.toLowerCase().replace(/\.$/, '');
  for (let start = 0; start !== -1 && start < name.length; ) {
    const profile = BY_SUFFIX.get(start === 0 ? name : name.slice(start));
    if (profile !== undefined) return profile;
    const dot = name.indexOf('.', start);
    start = dot === -1 ? -1 : dot + 1;
  }
  return null;
}
