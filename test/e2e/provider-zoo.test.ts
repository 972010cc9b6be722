/**
 * The provider zoo: one scripted mail host per provider profile, on its own loopback address, behind MX names that
 * the provider detection recognises, speaking that provider's banner, EHLO and replies (the reply texts are the
 * providers' published ones, as in fixtures/smtp-replies; banners and EHLO lines follow each provider's host
 * naming). `verify()` runs end to end against each: DNS through a dns2 server, SMTP through real sockets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeResolver } from '../../src/dns/node.js';
import type { Zone } from '../../src/testing/zone.js';
import { createVerifier, type Verifier } from '../../src/verifier.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { loopbackTransport } from '../support/loopback-transport.js';
import { type RawPeer, type RawServerHarness, startRawServer } from '../support/raw-server.js';

/** One provider's mail host: how it greets, what it offers, and its reply to each local part. */
interface ZooHost {
  readonly domain: string;
  readonly mx: string;
  readonly ip: string;
  readonly banner: readonly string[];
  readonly ehlo: readonly string[];
  /** Reply lines by local part; any other local part (the catch-all probe's included) gets `unknown`. */
  readonly rcpt: Readonly<Record<string, readonly string[]>>;
  readonly unknown: readonly string[];
}

const ok = ['250 2.1.5 OK'];
const EHLO_COMMON = [
  '250-SIZE 35882577',
  '250-8BITMIME',
  '250-ENHANCEDSTATUSCODES',
  '250-PIPELINING',
  '250 SMTPUTF8',
];

const ZOO: Readonly<Record<string, ZooHost>> = {
  google: {
    domain: 'gmail-zoo.test',
    mx: 'gmail-smtp-in.l.google.com',
    ip: '127.0.1.1',
    banner: ['220 mx.google.com ESMTP a1si123456qkb.12 - gsmtp'],
    ehlo: ['250-mx.google.com at your service, [127.0.0.1]', ...EHLO_COMMON],
    rcpt: {
      alice: ['250 2.1.5 OK a1si123456qkb.12 - gsmtp'],
      gone: [
        '550-5.2.1 The email account that you tried to reach is disabled. Learn more at',
        '550 5.2.1  https://support.google.com/mail/?p=DisabledUser x12si2345678ejb.3 - gsmtp',
      ],
      busy: [
        '550-5.2.1 The user you are trying to contact is receiving mail at a rate that',
        '550-5.2.1 prevents additional messages from being delivered. For more',
        '550 5.2.1 information, go to https://support.google.com/mail/?p=ReceivingRatePerm - gsmtp',
      ],
      full: [
        "552-5.2.2 The recipient's inbox is out of storage space. Please direct the recipient to",
        '552 5.2.2  https://support.google.com/mail/?p=OverQuotaPerm - gsmtp',
      ],
    },
    unknown: [
      '550-5.1.1 The email account that you tried to reach does not exist. Please try',
      "550-5.1.1 double-checking the recipient's email address for typos or",
      '550-5.1.1 unnecessary spaces. Learn more at',
      '550 5.1.1  https://support.google.com/mail/?p=NoSuchUser a1si123456qkb.12 - gsmtp',
    ],
  },
  microsoft365: {
    domain: 'contoso-zoo.test',
    mx: 'contoso-zoo-test.mail.protection.outlook.com',
    ip: '127.0.1.2',
    banner: [
      '220 BN1NAM02FT022.mail.protection.outlook.com Microsoft ESMTP MAIL Service ready at Fri, 27 Nov 2026 07:00:00 +0000',
    ],
    ehlo: ['250-BN1NAM02FT022.mail.protection.outlook.com Hello [127.0.0.1]', ...EHLO_COMMON],
    rcpt: {
      alice: ['250 2.1.5 Recipient OK'],
      banned: [
        '550 5.7.606 Access denied, banned sending IP [127.0.0.1]. To request removal from this list please visit https://sender.office.com/ and follow the directions. For more information please go to http://go.microsoft.com/fwlink/?LinkID=526655 (AS16012609)',
      ],
    },
    unknown: [
      '550 5.4.1 Recipient address rejected: Access denied. AS(201806281) [BN1NAM02FT022.eop-nam02.prod.protection.outlook.com]',
    ],
  },
  outlook: {
    domain: 'hotmail-zoo.test',
    mx: 'hotmail-zoo-test.olc.protection.outlook.com',
    ip: '127.0.1.3',
    banner: [
      '220 DB5EUR03FT027.mail.protection.outlook.com Microsoft ESMTP MAIL Service ready at Fri, 27 Nov 2026 07:00:00 +0000',
    ],
    ehlo: ['250-DB5EUR03FT027.mail.protection.outlook.com Hello [127.0.0.1]', ...EHLO_COMMON],
    rcpt: { alice: ['250 2.1.5 Recipient OK'] },
    unknown: [
      '550 5.5.0 Requested action not taken: mailbox unavailable (S2017062302). [DB5EUR03FT027.eop-EUR03.prod.protection.outlook.com]',
    ],
  },
  yahoo: {
    domain: 'yahoo-zoo.test',
    mx: 'mta5.am0.yahoodns.net',
    ip: '127.0.1.4',
    banner: ['220 mtaproxy103.free.mail.bf1.yahoo.com ESMTP ready'],
    ehlo: ['250-mtaproxy103.free.mail.bf1.yahoo.com', '250-PIPELINING', '250-SIZE 41943040', '250 8BITMIME'],
    rcpt: {},
    unknown: ['250 recipient <someone@yahoo.com> ok'],
  },
  icloud: {
    domain: 'icloud-zoo.test',
    mx: 'mx01.mail.icloud.com',
    ip: '127.0.1.5',
    banner: ['220 mx01.mail.icloud.com ESMTP'],
    ehlo: ['250-mx01.mail.icloud.com', ...EHLO_COMMON],
    rcpt: {
      alice: ok,
      policy: [
        '550 5.7.1 [CS01] Message rejected due to local policy. Please visit https://support.apple.com/en-us/HT204137',
      ],
    },
    unknown: ['550 5.1.1 <someone@icloud.com>: user does not exist'],
  },
  proofpoint: {
    domain: 'proofpoint-zoo.test',
    mx: 'mx0a-00123456.pphosted.com',
    ip: '127.0.1.6',
    banner: ['220 mx0a-00123456.pphosted.com ESMTP mfa-m0123456'],
    ehlo: ['250-mx0a-00123456.pphosted.com Hello [127.0.0.1]', ...EHLO_COMMON],
    rcpt: {
      alice: ok,
      marked: [
        '550 5.7.1 <marked@proofpoint-zoo.test>: Recipient address rejected: User email address is marked as invalid.',
      ],
      relay: ['554 5.7.1 <relay@proofpoint-zoo.test>: Relay access denied'],
    },
    unknown: ['550 5.1.1 User Unknown'],
  },
  mimecast: {
    domain: 'mimecast-zoo.test',
    mx: 'eu-smtp-inbound-1.mimecast.com',
    ip: '127.0.1.7',
    banner: ['220 eu-smtp-inbound-1.mimecast.com ESMTP'],
    ehlo: ['250-eu-smtp-inbound-1.mimecast.com Hello [127.0.0.1]', ...EHLO_COMMON],
    rcpt: {
      alice: ok,
      blocked: ['550 Envelope blocked - User Entry - https://community.mimecast.com/docs/DOC-1369#550'],
      later: [
        '451 Internal resource temporarily unavailable - https://community.mimecast.com/docs/DOC-1369#451',
      ],
    },
    unknown: [
      '550 Invalid Recipient - https://community.mimecast.com/docs/DOC-1369#550 [abcdefghijklmnopqrstu.uk123]',
    ],
  },
  barracuda: {
    domain: 'barracuda-zoo.test',
    mx: 'd12345a.ess.barracudanetworks.com',
    ip: '127.0.1.8',
    banner: ['220 d12345a.ess.barracudanetworks.com ESMTP (Barracuda Email Security Service)'],
    ehlo: ['250-d12345a.ess.barracudanetworks.com Hello [127.0.0.1]', ...EHLO_COMMON],
    rcpt: {
      alice: ok,
      reputation: [
        '554 Service unavailable; Client host [127.0.0.1] blocked using Barracuda Reputation; http://bbl.barracudacentral.org/q.cgi?ip=127.0.0.1',
      ],
    },
    unknown: ['550 cuda_nsu 5.1.1 <someone@barracuda-zoo.test> Recipient address rejected: User unknown'],
  },
  cisco: {
    domain: 'cisco-zoo.test',
    mx: 'mx1.hc1234-56.iphmx.com',
    ip: '127.0.1.9',
    banner: ['220 mx1.hc1234-56.iphmx.com ESMTP'],
    ehlo: ['250-mx1.hc1234-56.iphmx.com', ...EHLO_COMMON],
    rcpt: { alice: ok, hourly: ['452 Too many recipients received this hour'] },
    unknown: ['550 #5.1.0 Address rejected.'],
  },
  broadcom: {
    domain: 'messagelabs-zoo.test',
    mx: 'cluster1.eu.messagelabs.com',
    ip: '127.0.1.10',
    banner: ['220 server-12.tower-1.messagelabs.com ESMTP'],
    ehlo: ['250-server-12.tower-1.messagelabs.com', ...EHLO_COMMON],
    rcpt: {
      alice: ok,
      spf: [
        '553-SPF (Sender Policy Framework) domain authentication',
        '553-fail. Refer to the Troubleshooting page at',
        '553-http://www.symanteccloud.com/troubleshooting for more',
        '553 information. (#5.7.1)',
      ],
    },
    unknown: ['550-Invalid recipient <someone@messagelabs-zoo.test>', '550 (#5.1.1)'],
  },
  trendmicro: {
    domain: 'trend-zoo.test',
    mx: 'in.hes.trendmicro.com',
    ip: '127.0.1.11',
    banner: ['220 in.hes.trendmicro.com ESMTP'],
    ehlo: ['250-in.hes.trendmicro.com', ...EHLO_COMMON],
    rcpt: { alice: ok },
    unknown: ['554 5.7.1 <someone@trend-zoo.test>: Recipient address rejected: Access denied.'],
  },
};

/** Writes a (possibly multi-line) reply. */
async function say(peer: RawPeer, lines: readonly string[]): Promise<void> {
  await peer.write(lines.map((line) => `${line}\r\n`).join(''));
}

/** The SMTP dialogue of one zoo host: greeting, EHLO, then MAIL / RCPT / RSET / NOOP / QUIT until the client leaves. */
function scriptOf(host: ZooHost) {
  return async (peer: RawPeer): Promise<void> => {
    await say(peer, host.banner);
    for (let line = await peer.readLine(); line !== null; line = await peer.readLine()) {
      const command = line.slice(0, 4).toUpperCase();
      if (command === 'EHLO') await say(peer, host.ehlo);
      else if (command === 'HELO') await say(peer, [host.ehlo[0]!.replace('250-', '250 ')]);
      else if (command === 'MAIL') await say(peer, ['250 2.1.0 Sender OK']);
      else if (command === 'RCPT') {
        const local = /<([^@>]*)@/.exec(line)?.[1] ?? '';
        await say(peer, host.rcpt[local] ?? host.unknown);
      } else if (command === 'QUIT') {
        await say(peer, ['221 2.0.0 Bye']);
        return;
      } else if (command === 'RSET' || command === 'NOOP') await say(peer, ['250 2.0.0 OK']);
      else await say(peer, ['502 5.5.1 Command not implemented']);
    }
  };
}

let dns: DnsTestServer;
let servers: RawServerHarness[];
let ports: Record<string, number>;

beforeAll(async () => {
  const zone: Record<string, Zone[string]> = {};
  for (const host of Object.values(ZOO)) {
    zone[host.domain] = { mx: [{ priority: 10, exchange: host.mx }] };
    zone[host.mx] = { a: [host.ip] };
  }
  dns = await startDnsServer(zone);
  servers = await Promise.all(
    Object.values(ZOO).map((host) => startRawServer({ host: host.ip, script: scriptOf(host) })),
  );
  ports = Object.fromEntries(servers.map((server) => [server.host, server.port]));
});

afterAll(async () => {
  await Promise.all([dns, ...(servers ?? [])].map((server) => server?.close()));
});

function verifier(extra: Parameters<typeof createVerifier>[0] = {}): Verifier {
  return createVerifier({
    resolver: nodeResolver({ servers: [dns.address], timeoutMs: 1000, tries: 1 }),
    transport: loopbackTransport(ports),
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
    heloHost: 'test.local',
    timeoutMs: 5000,
    ...extra,
  });
}

describe('the provider zoo: verify() against each provider profile', () => {
  it.each([
    ['google', 'alice', 'valid', null],
    ['google', 'nobody', 'invalid', 'mailbox_not_found'],
    ['google', 'gone', 'invalid', 'mailbox_disabled'],
    ['google', 'busy', 'unknown', 'mail_server_temporary_error'],
    ['google', 'full', 'invalid', 'mailbox_quota_exceeded'],
    ['microsoft365', 'alice', 'valid', null],
    ['microsoft365', 'nobody', 'invalid', 'mailbox_not_found'],
    ['microsoft365', 'banned', 'unknown', 'antispam_system'],
    ['outlook', 'alice', 'valid', null],
    ['outlook', 'nobody', 'invalid', 'mailbox_not_found'],
    ['icloud', 'alice', 'valid', null],
    ['icloud', 'nobody', 'invalid', 'mailbox_not_found'],
    ['icloud', 'policy', 'unknown', 'antispam_system'],
    ['proofpoint', 'alice', 'valid', null],
    ['proofpoint', 'nobody', 'invalid', 'mailbox_not_found'],
    ['proofpoint', 'marked', 'invalid', 'mailbox_not_found'],
    ['proofpoint', 'relay', 'unknown', 'antispam_system'],
    ['mimecast', 'alice', 'valid', null],
    ['mimecast', 'nobody', 'invalid', 'mailbox_not_found'],
    ['mimecast', 'blocked', 'unknown', 'antispam_system'],
    ['mimecast', 'later', 'unknown', 'mail_server_temporary_error'],
    ['barracuda', 'alice', 'valid', null],
    ['barracuda', 'nobody', 'invalid', 'mailbox_not_found'],
    ['barracuda', 'reputation', 'unknown', 'antispam_system'],
    ['cisco', 'alice', 'valid', null],
    ['cisco', 'nobody', 'invalid', 'mailbox_not_found'],
    ['cisco', 'hourly', 'unknown', 'mail_server_temporary_error'],
    ['broadcom', 'alice', 'valid', null],
    ['broadcom', 'nobody', 'invalid', 'mailbox_not_found'],
    ['broadcom', 'spf', 'unknown', 'antispam_system'],
    ['trendmicro', 'alice', 'valid', null],
    ['trendmicro', 'nobody', 'invalid', 'mailbox_not_found'],
  ] as const)('%s: %s is %s/%s', async (provider, local, status, subStatus) => {
    const host = ZOO[provider]!;
    const v = verifier();
    const result = await v.verify(`${local}@${host.domain}`);
    expect(result).toMatchObject({ status, sub_status: subStatus, mx_record: host.mx });
    expect(result.smtp_provider).not.toBeNull();
    if (status !== 'valid') {
      // `reason` quotes the decisive reply as the server sent it.
      const reply = host.rcpt[local] ?? host.unknown;
      expect(result.reason).toContain(reply.at(-1)!.slice(4, 60));
    }
    await v.dispose();
  });

  it('Microsoft 365\'s "5.4.1 Access denied" is a missing mailbox at *.mail.protection.outlook.com only', async () => {
    const v = verifier();
    const result = await v.verify(`nobody@${ZOO.microsoft365!.domain}`);
    expect(result).toMatchObject({
      status: 'invalid',
      sub_status: 'mailbox_not_found',
      smtp_provider: 'microsoft',
    });
    expect(result.reason).toContain('550 5.4.1 Recipient address rejected: Access denied. AS(201806281)');
    await v.dispose();
  });

  it('Yahoo / AOL accept every recipient at RCPT TO: a 250 is never valid, the catch-all probe sees it', async () => {
    const host = ZOO.yahoo!;
    const server = servers.find((candidate) => candidate.host === host.ip)!;
    const v = verifier();
    const result = await v.verify(`alice@${host.domain}`);
    expect(result).toMatchObject({ status: 'catch_all', accept_all: true, smtp_provider: 'yahoo' });
    expect(result.reason).toMatch(/Yahoo \/ AOL, which accepts every recipient at RCPT TO/);
    const probes = server.received().filter((line) => /^RCPT TO:<[a-z2-7]{24}@yahoo-zoo\.test>/i.test(line));
    expect(probes.length).toBeGreaterThanOrEqual(1);
    await v.dispose();
  });

  it('Yahoo / AOL: without the catch-all probe a 250 is still not valid', async () => {
    const v = verifier({ catchAll: false });
    const result = await v.verify(`bob@${ZOO.yahoo!.domain}`);
    expect(result).toMatchObject({ status: 'catch_all', accept_all: true });
    expect(result.reason).toContain('accepts every recipient at RCPT TO');
    await v.dispose();
  });
});
