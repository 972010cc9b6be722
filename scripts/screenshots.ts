/**
 * Writes screenshots of the web console into docs/images/: the console served by `createServer` against
 * loopback DNS and SMTP servers (the test support's, nothing leaves 127.0.0.0/8), driven by Debian's Chromium
 * through playwright-core, at desktop (1280x800) and phone (390x844) size.
 *
 * Run: `npm run build && npm run screenshots` (Chromium at /usr/bin/chromium, or MAILVET_CHROMIUM).
 * @module
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { BulkJobManager } from '../src/bulk/manager.js';
import { nodeResolver } from '../src/dns/node.js';
import { createServer } from '../src/http/node.js';
import type { Zone } from '../src/testing/zone.js';
import { startDnsServer } from '../test/support/dns-server.js';
import { startSmtpServer } from '../test/support/smtp-server.js';

const CHROMIUM = process.env.MAILVET_CHROMIUM ?? '/usr/bin/chromium';
const OUT = fileURLToPath(new URL('../docs/images/', import.meta.url));
const KEY = 'screenshot-key';

const zone: Zone = {
  'acme.test': { mx: [{ priority: 10, exchange: 'mx.acme.test' }] },
  'mx.acme.test': { a: ['127.0.0.2'] },
  'catchall.test': { mx: [{ priority: 10, exchange: 'mx.catchall.test' }] },
  'mx.catchall.test': { a: ['127.0.0.3'] },
  // Greylists: answers 450 to the first RCPT TO of each address.
  'grey.test': { mx: [{ priority: 10, exchange: 'mx.grey.test' }] },
  'mx.grey.test': { a: ['127.0.0.4'] },
};

const FIRST = ['jane', 'omar', 'li', 'sofia', 'ken', 'amara', 'lucas', 'mia', 'ivan', 'noor'];
const LAST = ['doe', 'haddad', 'wei', 'rossi', 'sato', 'okafor', 'silva', 'berg', 'petrov', 'khan'];

/** A sign-up list: most addresses exist at acme.test, some do not, some are at a catch-all domain. */
function signups(count: number): string {
  const rows = Array.from({ length: count }, (_, i) => {
    const name = `${FIRST[i % 10]} ${LAST[Math.floor(i / 10) % 10]}`;
    const local = name.replace(' ', '.');
    const domain = i % 9 === 4 ? 'catchall.test' : 'acme.test';
    const mailbox = i % 7 === 3 ? `${local}.old` : local;
    return `${i + 1},${name},${mailbox}@${domain},2024-0${(i % 9) + 1}-1${i % 10}`;
  });
  return `id,name,email,signed up\n${rows.join('\n')}\n`;
}

async function signIn(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('API key').fill(KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Verify one address' }).waitFor();
}

async function verify(page: Page, email: string): Promise<void> {
  await page.getByLabel('Email address').fill(email);
  await page.getByRole('button', { name: 'Verify', exact: true }).click();
  await page.getByRole('article', { name: `Result for ${email}` }).waitFor();
}

const mailboxes = Object.fromEntries(
  FIRST.flatMap((first) => LAST.map((last) => [`${first}.${last}`, 'ok' as const])),
);
const dns = await startDnsServer(zone);
const smtp = await startSmtpServer({ host: '127.0.0.2', mailboxes });
const catchAll = await startSmtpServer({ host: '127.0.0.3', port: smtp.port, catchAll: true });
const greylisting = await startSmtpServer({ host: '127.0.0.4', port: smtp.port, greylist: true });
const verifierOptions = {
  resolver: nodeResolver({ servers: [dns.address] }),
  smtpPort: smtp.port,
  allowAddresses: ['127.0.0.0/8'],
  allowTlds: ['test'],
  heloHost: 'console.mailvet-test.net',
  trace: true,
};
// Greylisted addresses retry after 10 minutes: the waiting job is photographed long before.
const jobs = new BulkJobManager({ verifierOptions, greylistRetry: { delaysMs: [600_000] } });
const server = await createServer({
  port: 0,
  host: '127.0.0.1',
  apiKeys: [KEY],
  limits: { requestsPerSecond: 10_000, burst: 10_000 },
  verifierOptions,
  jobs,
});
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
try {
  await mkdir(OUT, { recursive: true });
  const desktop = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await signIn(desktop, server.url);
  await verify(desktop, 'jane.doe@acme.test');
  await desktop.screenshot({ path: `${OUT}console-verify-desktop.png` });

  await desktop.getByLabel('Drop a CSV or TXT file here, or choose one').setInputFiles({
    name: 'signups.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from(signups(180)),
  });
  await desktop.getByRole('button', { name: 'Start verification' }).click();
  await desktop
    .getByTestId('job-status')
    .first()
    .filter({ hasText: 'complete' })
    .waitFor({ timeout: 60_000 });
  await desktop.getByRole('table', { name: 'Results' }).first().getByTestId('result-row').first().waitFor();
  // The job: its counts per status, the downloads and the first rows of its results.
  await desktop.locator('#bulk .job').evaluate((section) => section.scrollIntoView());
  await desktop.screenshot({ path: `${OUT}console-bulk-desktop.png` });

  // A job that waits: nine addresses done, one greylisted and waiting for its retry.
  const waiting = [...FIRST.slice(0, 9).map((first) => `${first}.doe@acme.test`), 'pat.lee@grey.test'];
  await desktop.getByLabel('Drop a CSV or TXT file here, or choose one').setInputFiles({
    name: 'contacts.txt',
    mimeType: 'text/plain',
    buffer: Buffer.from(`${waiting.join('\n')}\n`),
  });
  await desktop.getByRole('button', { name: 'Start verification' }).click();
  await desktop.locator('#bulk').getByTestId('job-retries').waitFor({ timeout: 60_000 });
  await desktop
    .locator('#bulk')
    .getByTestId('job-elapsed')
    .filter({ hasText: /^[1-9]/ })
    .waitFor();
  await desktop.locator('#bulk .job').evaluate((section) => section.scrollIntoView());
  await desktop.screenshot({ path: `${OUT}console-waiting-desktop.png` });

  const phone = await browser.newPage({
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
  });
  await signIn(phone, server.url);
  await verify(phone, 'omar.haddad@gmial.com');
  await phone.screenshot({ path: `${OUT}console-verify-phone.png` });
  await phone.locator('#jobs').evaluate((section) => section.scrollIntoView());
  await phone.screenshot({ path: `${OUT}console-jobs-phone.png` });
  console.log(`wrote ${OUT}console-{verify,bulk,waiting}-desktop.png, console-{verify,jobs}-phone.png`);
} finally {
  await browser.close();
  await server.close();
  await jobs.close();
  await Promise.all([dns.close(), smtp.close(), catchAll.close(), greylisting.close()]);
}
