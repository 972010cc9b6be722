/**
 * Recognises the mail provider behind a domain from its MX host names (`smtp_provider` in the result).
 * @module
 */

/**
 * MX host name suffixes of well-known mail providers and mail-security gateways, with the provider name
 * reported in `smtp_provider`. A suffix matches the host itself or any name under it, on a label boundary
 * (`google.com` matches `aspmx.l.google.com`, never `notgoogle.com`). Names are stable: they are part of the
 * API's wire shape.
 */
export const PROVIDER_SUFFIXES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  google: ['google.com', 'googlemail.com', 'smtp.goog'],
  microsoft: ['outlook.com', 'hotmail.com', 'outlook.cn', 'office365.us'],
  yahoo: ['yahoodns.net', 'yahoo.com'],
  zoho: ['zoho.com', 'zoho.eu', 'zoho.in', 'zoho.com.au', 'zoho.jp', 'zohomail.com'],
  proton: ['protonmail.ch', 'proton.me', 'protonmail.com'],
  icloud: ['icloud.com', 'mail.me.com'],
  yandex: ['yandex.net', 'yandex.ru'],
  mailru: ['mail.ru'],
  fastmail: ['messagingengine.com', 'fastmail.com'],
  gmx: ['gmx.net', 'gmx.com', 'gmx.de'],
  webde: ['web.de'],
  ionos: ['ionos.com', 'ionos.de', 'ionos.co.uk', 'kundenserver.de', '1and1.com', 'perfora.net'],
  aol: ['aol.com'],
  mimecast: ['mimecast.com', 'mimecast.co.za', 'mimecast-offshore.com'],
  proofpoint: ['pphosted.com', 'ppe-hosted.com', 'proofpoint.com'],
  barracuda: ['barracudanetworks.com'],
  cisco: ['iphmx.com'],
  broadcom: ['messagelabs.com'],
  trendmicro: ['trendmicro.com', 'trendmicro.eu'],
  sophos: ['sophos.com'],
  hornetsecurity: ['hornetsecurity.com'],
  forcepoint: ['mailcontrol.com'],
  cloudflare: ['mx.cloudflare.net'],
  godaddy: ['secureserver.net'],
  rackspace: ['emailsrvr.com'],
  ovh: ['ovh.net'],
  namecheap: ['privateemail.com', 'registrar-servers.com'],
  tutanota: ['tutanota.de'],
  mailboxorg: ['mailbox.org'],
  posteo: ['posteo.de'],
  qq: ['qq.com'],
  netease: ['163.com', '126.com', 'netease.com'],
  naver: ['naver.com'],
  seznam: ['seznam.cz'],
});

/** Provider by host-name suffix. */
const BY_SUFFIX: ReadonlyMap<string, string> = new Map(
  Object.entries(PROVIDER_SUFFIXES).flatMap(([provider, suffixes]) =>
    suffixes.map((suffix) => [suffix, provider] as const),
  ),
);

const MAX_HOST_LENGTH = 253;

/**
 * The provider of one MX host name, or `null`. Case and a trailing dot are ignored. The name itself, then each
 * shorter suffix at a label boundary, is looked up, so the most specific entry wins.
 */
export function providerOfHost(host: string): string | null {
  if (typeof host !== 'string' || host.length === 0 || host.length > MAX_HOST_LENGTH + 1) return null;
  const name = host.toLowerCase().replace(/\.$/, '');
  for (let start = 0; start !== -1 && start < name.length; ) {
    const provider = BY_SUFFIX.get(start === 0 ? name : name.slice(start));
    if (provider !== undefined) return provider;
    const dot = name.indexOf('.', start);
    start = dot === -1 ? -1 : dot + 1;
  }
  return null;
}

/**
 * The provider of a domain from its MX host names, tried in order (the most preferred first): the first host
 * that names a known provider decides. `null` when none does.
 * @example
 * providerOf(['aspmx.l.google.com', 'alt1.aspmx.l.google.com']); // 'google'
 * providerOf(['example-com.mail.protection.outlook.com']); // 'microsoft'
 * providerOf(['mx.example.com']); // null
 */
export function providerOf(hosts: readonly string[]): string | null {
  for (const host of hosts) {
    const provider = providerOfHost(host);
    if (provider !== null) return provider;
  }
  return null;
}
