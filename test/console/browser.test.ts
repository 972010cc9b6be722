/**
 * The console in a real browser: Playwright (playwright-core) driving Debian's Chromium, headless, against
 * createServer with loopback DNS and SMTP servers. Skipped, with a notice, where no Chromium is installed
 * (`apt-get install -y chromium`; .ci/run installs it).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AxeResults } from 'axe-core';
import { parse } from 'csv-parse/sync';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { Clock } from '../../src/clock.js';
import { nodeResolver } from '../../src/dns/node.js';
import { createServer, type RunningServer } from '../../src/http/node.js';
import type { Zone } from '../../src/testing/zone.js';
import { BUILD_TIMEOUT_MS, DIST_CONSOLE_DIR, ensureBuiltDist } from '../support/built-dist.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';

const CHROMIUM = process.env.MAILVET_CHROMIUM ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available)
  console.log(`console browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);

const KEY = 'console-test-key';
/** Where the tests leave screenshots of the states they check, for a person to look at (never committed). */
const SHOTS = process.env.MAILVET_CONSOLE_SHOTS ?? tmpdir();
const zone: Zone = {
  'good.test': { mx: [{ priority: 10, exchange: 'mx.good.test' }] },
  'mx.good.test': { a: ['127.0.0.2'] },
  // A catch-all (accept-all) domain: its mail host accepts every recipient, the random probe included.
  'catchall.test': { mx: [{ priority: 10, exchange: 'mx.catchall.test' }] },
  'mx.catchall.test': { a: ['127.0.0.3'] },
  // A greylisting domain: its mail host answers 450 to the first RCPT TO of each address.
  'grey.test': { mx: [{ priority: 10, exchange: 'mx.grey.test' }] },
  'mx.grey.test': { a: ['127.0.0.4'] },
};

let dns: DnsTestServer;
let smtp: SmtpServerHarness;
let catchAllSmtp: SmtpServerHarness;
let server: RunningServer;
let browser: Browser;

/** The verifier options of every server here: loopback DNS and SMTP only. */
function verifierOptions() {
  return {
    resolver: nodeResolver({ servers: [dns.address] }),
    smtpPort: smtp.port,
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
    heloHost: 'console.mailvet-test.net',
  };
}

/**
 * A clock whose timers run when the test says so: the job manager's greylisting retries wait on it, so a
 * job stays in its wait for as long as the test looks at it, and the retry runs when the test advances it.
 */
function manualClock() {
  let offset = 0;
  const timers = new Set<() => void>();
  const clock: Clock = {
    now: () => Date.now() + offset,
    setTimeout: (callback) => {
      timers.add(callback);
      return callback;
    },
    clearTimeout: (handle) => {
      timers.delete(handle as () => void);
    },
  };
  const advance = (ms: number) => {
    offset += ms;
    const due = [...timers];
    timers.clear();
    for (const callback of due) callback();
  };
  return { clock, advance };
}

beforeAll(async () => {
  if (!available) return;
  await ensureBuiltDist(); // the console's bundle
  dns = await startDnsServer(zone);
  smtp = await startSmtpServer({ host: '127.0.0.2', mailboxes: { alice: 'ok', bob: 'ok' } });
  // The verifier has one SMTP port: the second mail host listens on the same port number on its own address.
  catchAllSmtp = await startSmtpServer({ host: '127.0.0.3', port: smtp.port, catchAll: true });
  server = await createServer({
    port: 0,
    host: '127.0.0.1',
    apiKeys: [KEY],
    console: { dir: DIST_CONSOLE_DIR },
    limits: { requestsPerSecond: 10_000, burst: 10_000 },
    verifierOptions: verifierOptions(),
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 60_000 + BUILD_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await Promise.all([dns?.close(), smtp?.close(), catchAllSmtp?.close()]);
});

async function signedIn(url = server.url): Promise<{ page: Page; dialogs: string[] }> {
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  const dialogs: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.accept();
  });
  await page.goto(url);
  await page.getByLabel('API key').waitFor();
  expect(await seriousViolations(page)).toEqual([]);
  await page.getByLabel('API key').fill('wrong-key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('alert').textContent()).toContain('API key');
  await page.getByLabel('API key').fill(KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Verify one address' }).waitFor();
  return { page, dialogs };
}

const AXE_SOURCE = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core in the page and returns its serious and critical violations, one line each (rule, impact,
 * the first elements it names). The console's CSP (`script-src 'self'`) would block an injected script tag, so
 * the source runs through `page.evaluate`, which goes over the DevTools protocol that CSP does not govern: the
 * page keeps its real CSP (no `bypassCSP`), so the check also sees it.
 */
async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document): Promise<AxeResults> } }).axe;
    const results = await axe.run(document);
    return results.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact ?? null,
      targets: violation.nodes.slice(0, 3).map((node) => node.target.join(' ')),
    }));
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.targets.join(', ')}`);
}

async function verify(page: Page, email: string) {
  await page.getByLabel('Email address').fill(email);
  await page.getByRole('button', { name: 'Verify', exact: true }).click();
  const card = page.getByRole('article', { name: `Result for ${email}` });
  await card.waitFor();
  return card;
}

describe.skipIf(!available)('the console in Chromium', () => {
  it('signs in, verifies deliverable, undeliverable, catch-all and typo addresses into cards, and renders hostile input as text', async () => {
    const { page, dialogs } = await signedIn();
    const good = await verify(page, 'alice@good.test');
    expect(await good.getByTestId('status').textContent()).toContain('Valid');
    const bad = await verify(page, 'nobody@good.test');
    expect(await bad.getByTestId('status').textContent()).toContain('Invalid');
    expect(await bad.getByTestId('sub-status').textContent()).toBe(
      'The mail server says this mailbox does not exist.',
    );
    expect(await bad.getByTestId('reason').textContent()).toContain('550');
    const catchAll = await verify(page, 'whoever@catchall.test');
    expect(await catchAll.getByTestId('status').textContent()).toContain('Catch-all');
    expect(await catchAll.getByTestId('flags').textContent()).toContain('accept-all');
    expect(await catchAll.getByTestId('sub-status').textContent()).toContain('could not be confirmed');
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 }); // a phone's width: the same page, laid out narrow
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(catchAllSmtp.rcpts().map((rcpt) => rcpt.toLowerCase())).toContain('whoever@catchall.test');
    // A typo: the suggestion is a button that verifies the corrected address (gmail.com is NXDOMAIN on the
    // loopback DNS server: no packet leaves the machine).
    const typo = await verify(page, 'alice@gmial.com');
    expect(await typo.getByTestId('suggestion').textContent()).toBe('alice@gmail.com');
    await typo.getByTestId('suggestion').click();
    await page.getByRole('article', { name: 'Result for alice@gmail.com' }).waitFor();
    const hostile = '"<img src=x onerror=alert(1)>"@example.com';
    const card = await verify(page, hostile);
    expect(await card.getByRole('heading').textContent()).toBe(hostile);
    expect(await page.locator('article img').count()).toBe(0);
    expect(dialogs).toEqual([]);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.context().close();
  }, 60_000);

  it('speaks words, not codes: a refused key and a syntax failure read as sentences, and the layout holds still', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(server.url);
    const card = page.locator('form.sign-in');
    await card.waitFor();
    const before = await card.boundingBox();
    await page.getByLabel('API key').fill('wrong-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await expect
      .poll(() => alert.textContent())
      .toBe('This API key was not accepted. Check that you copied the whole key, then try again.');
    // The card keeps its width when the message appears (it grew from 264 to 424 px).
    const after = await card.boundingBox();
    expect(after?.width).toBe(before?.width);
    expect(after?.x).toBe(before?.x);
    await page.screenshot({ path: join(SHOTS, 'sign-in-refused.png') });
    await page.getByLabel('API key').fill(KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // A syntax failure: the sentence first, its code beside it in small type (and as the title).
    const bad = await verify(page, 'alice.good.test');
    expect(await bad.getByTestId('reason-words').textContent()).toBe('The address has no @.');
    expect(await bad.getByTestId('reason-code').textContent()).toBe('no_at_sign');
    expect(await bad.getByTestId('reason').getAttribute('title')).toBe('no_at_sign');
    await bad.screenshot({ path: join(SHOTS, 'syntax-reason.png') });
    // The disabled Start button does not sit flush on the drop zone.
    const drop = await page.locator('label.drop').boundingBox();
    const start = await page.getByRole('button', { name: 'Start verification' }).boundingBox();
    expect(drop).not.toBeNull();
    expect(start).not.toBeNull();
    if (drop !== null && start !== null) expect(start.y - (drop.y + drop.height)).toBeGreaterThan(0);
    await page.locator('#bulk').screenshot({ path: join(SHOTS, 'bulk-start.png') });
    expect(await seriousViolations(page)).toEqual([]);
    await context.close();
  }, 60_000);

  it("uploads a 600-row CSV, follows it to 100 %, and in a fresh page opens it from the Jobs list, downloads the CSV with the file's columns, and deletes the job", async () => {
    const { page, dialogs } = await signedIn();
    const streams: { url: string; authorized: boolean }[] = [];
    const posts: { url: string; type: string }[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/events'))
        streams.push({ url: request.url(), authorized: request.headers().authorization === `Bearer ${KEY}` });
      if (request.method() === 'POST')
        posts.push({ url: new URL(request.url()).pathname, type: request.headers()['content-type'] ?? '' });
    });
    const originals = Array.from({ length: 600 }, (_, i) => {
      const local = i % 10 === 0 ? 'alice' : `user${i}`;
      const notes =
        i % 7 === 0 ? '<img src=x onerror=alert(1)>' : i % 11 === 0 ? 'say "hi"\nbye 🎉' : `<b>${i}</b>`;
      return [String(i), `Person, ${i}`, `${local}@good.test`, notes, i % 13 === 0 ? '+44 20 7946 0958' : ''];
    });
    const quoted = (cell: string) => (/[",\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);
    const rows = originals.map((row) => row.map(quoted).join(','));
    const csv = `id,name,E-Mail,notes,phone\n${rows.join('\n')}\n`;
    await page.getByLabel('Drop a CSV or TXT file here, or choose one').setInputFiles({
      name: 'signups.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(csv),
    });
    await expect.poll(() => page.getByLabel('Email column').inputValue()).toBe('2');
    await page.getByRole('button', { name: 'Start verification' }).click();
    await expect
      .poll(() => page.getByTestId('job-percent').first().textContent(), { timeout: 60_000 })
      .toBe('100');
    expect(await page.getByTestId('job-status').first().textContent()).toBe('complete');
    // The file went up in batches of CSV rows (so that the server keeps them), not as one list body: the job,
    // its rows, its start.
    const id = posts[1]?.url.split('/')[3] ?? '';
    expect(posts.map((post) => post.url.replace(id, 'ID'))).toEqual([
      '/v1/bulk',
      '/v1/bulk/ID/emails',
      '/v1/bulk/ID/start',
    ]);
    expect(posts[0]?.type).toMatch(/^application\/json/);
    expect(posts[1]?.type).toMatch(/^text\/csv/);
    // Live progress comes from the job's event stream, read with fetch so the key stays in a header.
    expect(streams.length).toBeGreaterThan(0);
    expect(streams.every((stream) => stream.authorized && !stream.url.includes(KEY))).toBe(true);
    expect(await page.getByTestId('count-valid').first().textContent()).toBe('60');
    expect(await page.getByTestId('count-invalid').first().textContent()).toBe('540');

    // The page that uploaded the file is closed: a fresh one (no state of the upload) signs in, opens the job
    // from the Jobs list and downloads its CSV, which the server builds from the rows it kept.
    await page.context().close();
    const { page: later, dialogs: laterDialogs } = await signedIn();
    const listed = later.getByTestId('job-row').filter({ hasText: 'signups.csv' });
    await listed.first().waitFor();
    await listed.first().getByRole('button', { name: 'Open' }).click();
    await expect.poll(() => later.getByTestId('job-percent').first().textContent()).toBe('100');
    const [download] = await Promise.all([
      later.waitForEvent('download'),
      later.getByRole('button', { name: 'Download CSV' }).first().click(),
    ]);
    // Named after the uploaded file, not the job's id.
    expect(download.suggestedFilename()).toBe('signups-verified.csv');
    const downloaded = parse(await readFile((await download.path()) as string, 'utf8')) as string[][];
    const api = parse(
      await (
        await fetch(`${server.url}/v1/bulk/${id}/results?format=csv&results_only=true`, {
          headers: { authorization: `Bearer ${KEY}` },
        })
      ).text(),
    ) as string[][];
    // The file's columns in their order, then the API's result columns but `email` (the file's E-Mail column holds
    // the address: it is not repeated); row by row, the file's cells (the phone number not formula-escaped), then
    // the API's.
    expect(api[0]?.[0]).toBe('email');
    expect(downloaded[0]).toEqual(['id', 'name', 'E-Mail', 'notes', 'phone', ...(api[0] ?? []).slice(1)]);
    expect(downloaded).toHaveLength(601);
    expect(downloaded.slice(1).map((row) => row.slice(0, 5))).toEqual(originals);
    expect(downloaded.slice(1).map((row) => row.slice(5))).toEqual(api.slice(1).map((row) => row.slice(1)));
    expect(api.slice(1).map((row) => row[0])).toEqual(originals.map((row) => row[2]));

    // The results, 50 rows a page: the page holds one page, read with offset and limit.
    const results = later.getByRole('table', { name: 'Results' }).first();
    await expect.poll(() => results.getByTestId('result-row').count()).toBe(50);
    const pager = later.getByRole('navigation', { name: 'Results pages' }).first();
    expect(await pager.getByTestId('page-rows').textContent()).toBe('Rows 1–50 of 600');
    await pager.getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => pager.getByTestId('page-rows').textContent()).toBe('Rows 51–100 of 600');
    await expect
      .poll(() => results.getByTestId('result-row').first().locator('td').nth(1).textContent())
      .toBe(api[51]?.[0]);
    expect(await results.getByTestId('result-row').count()).toBe(50);

    await later.locator('#jobs').getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => later.getByTestId('job-row').count()).toBeGreaterThan(0);
    // The finished job with its counts and downloads, and the jobs table under it.
    expect(await seriousViolations(later)).toEqual([]);
    const before = await later.getByTestId('job-row').count();
    await listed.first().getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => later.getByTestId('job-row').count()).toBe(before - 1);
    expect(laterDialogs.some((dialog) => dialog.startsWith('confirm: Delete the job signups.csv'))).toBe(
      true,
    );
    expect(dialogs).toEqual([]);
    await later.context().close();
  }, 120_000);

  it("shows the key's usage: today's and the range's totals per status and a row per day, moving after verifications", async () => {
    const { page } = await signedIn();
    const panel = page.getByRole('region', { name: 'Usage' });
    const totals = panel.getByRole('table', { name: 'Usage totals' });
    await totals.waitFor();
    const todayTotal = async () =>
      Number(((await totals.getByTestId('usage-total').first().textContent()) ?? '').replace(/\D/g, ''));
    const before = await todayTotal();
    await verify(page, 'alice@good.test');
    await verify(page, 'nobody@good.test');
    await panel.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(todayTotal).toBe(before + 2);
    const days = panel.getByRole('table', { name: 'Usage per day' });
    const today = new Date().toISOString().slice(0, 10);
    expect(await days.getByRole('rowheader').first().textContent()).toBe(today);
    expect(await totals.getByRole('columnheader').allTextContents()).toEqual([
      'Period',
      '✔ Valid',
      '◐ Catch-all',
      '? Unknown',
      '⚠ Do not mail',
      '✖ Invalid',
      'Single',
      'Bulk',
      'Total',
    ]);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'console-usage.png'), fullPage: true });
    await page.context().close();
  }, 60_000);

  it('pages the jobs table, newest first', async () => {
    const made: string[] = [];
    for (let i = 0; i < 25; i++) {
      const response = await fetch(`${server.url}/v1/bulk`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `filler ${i}`, auto_start: false }),
      });
      made.push(((await response.json()) as { id: string }).id);
    }
    try {
      const { page } = await signedIn();
      const pager = page.getByRole('navigation', { name: 'Jobs pages' });
      await expect.poll(() => pager.getByTestId('page-rows').textContent()).toBe('Rows 1–20 of 25');
      const names = () => page.getByTestId('job-row').locator('td:first-child').allTextContents();
      expect(await names()).toEqual(Array.from({ length: 20 }, (_, i) => `filler ${24 - i}`));
      expect(await seriousViolations(page)).toEqual([]);
      await pager.getByRole('button', { name: 'Next' }).click();
      await expect.poll(() => pager.getByTestId('page-rows').textContent()).toBe('Rows 21–25 of 25');
      expect(await names()).toEqual(['filler 4', 'filler 3', 'filler 2', 'filler 1', 'filler 0']);
      expect(await pager.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
      await pager.getByRole('button', { name: 'Previous' }).click();
      await expect.poll(names).toHaveLength(20);
      await page.context().close();
    } finally {
      for (const id of made)
        await fetch(`${server.url}/v1/bulk/${id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${KEY}` },
        });
    }
  }, 60_000);

  it('says what a job waits for: a greylisted address, its retry time, a ticking clock, the results so far, and a Jobs list that follows the job to complete', async () => {
    const grey = await startSmtpServer({
      host: '127.0.0.4',
      port: smtp.port,
      greylist: true,
      mailboxes: { carol: 'ok' },
    });
    const { clock, advance } = manualClock();
    const RETRY_MS = 600_000;
    const jobs = new BulkJobManager({
      verifierOptions: verifierOptions(),
      clock,
      greylistRetry: { delaysMs: [RETRY_MS] },
    });
    const waiting = await createServer({
      port: 0,
      host: '127.0.0.1',
      apiKeys: [KEY],
      console: { dir: DIST_CONSOLE_DIR },
      limits: { requestsPerSecond: 10_000, burst: 10_000 },
      jobs,
      verifierOptions: verifierOptions(),
    });
    try {
      const { page, dialogs } = await signedIn(waiting.url);
      await page.getByLabel('Drop a CSV or TXT file here, or choose one').setInputFiles({
        name: 'contacts.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('alice@good.test\nnobody@good.test\ncarol@grey.test\n'),
      });
      await page.getByRole('button', { name: 'Start verification' }).click();
      const progress = page.locator('#bulk');
      // Two addresses are done; the third was greylisted and waits for its retry, 10 minutes on.
      const retries = progress.getByTestId('job-retries');
      await expect.poll(() => retries.textContent(), { timeout: 30_000 }).toMatch(/^1 address retries at /);
      const { jobs: listed } = (await (
        await fetch(`${waiting.url}/v1/bulk`, { headers: { authorization: `Bearer ${KEY}` } })
      ).json()) as { jobs: { id: string; retries: { waiting: number; next_retry_at: string } }[] };
      const job = listed[0];
      expect(job?.retries.waiting).toBe(1);
      const due = new Date(job?.retries.next_retry_at ?? '');
      const hhmm = `${String(due.getHours()).padStart(2, '0')}:${String(due.getMinutes()).padStart(2, '0')}`;
      expect(await retries.textContent()).toBe(`1 address retries at ${hhmm} (greylisting)`);
      expect(await progress.getByTestId('job-status').textContent()).toBe('processing');
      expect(await progress.getByTestId('job-percent').textContent()).toBe('66');
      // The elapsed clock ticks while the job waits (no event comes), and the estimate is a floor up to the retry.
      const elapsed = progress.getByTestId('job-elapsed');
      const first = await elapsed.textContent();
      await expect.poll(() => elapsed.textContent(), { timeout: 10_000 }).not.toBe(first);
      const left = (await progress.getByTestId('job-left').textContent()) ?? '';
      expect(left).toMatch(/^at least (9|10) min \d+ s left \(greylisting retries\)$/);
      expect(left).not.toContain('about 0 s');
      // The Jobs list shows the job as processing.
      const row = page.getByTestId('job-row').filter({ hasText: 'contacts.txt' });
      await expect.poll(() => row.getByTestId('job-row-state').textContent()).toBe('processing');
      await page.screenshot({ path: join(SHOTS, 'job-waiting.png'), fullPage: true });
      // The results so far: the two final ones, under the file's name.
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        progress.getByRole('button', { name: 'Download results so far (CSV)' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('contacts-verified-partial.csv');
      const partial = parse(await readFile((await download.path()) as string, 'utf8')) as string[][];
      expect(partial.slice(1).map((cells) => cells[0])).toEqual(['alice@good.test', 'nobody@good.test']);
      expect(await seriousViolations(page)).toEqual([]);
      // The retry comes due: the greylisting server now accepts carol, the job completes, and the Jobs list
      // says so from the job's events, with no Refresh.
      advance(RETRY_MS);
      await expect
        .poll(() => row.getByTestId('job-row-state').textContent(), { timeout: 30_000 })
        .toBe('complete');
      await expect.poll(() => progress.getByTestId('job-status').textContent()).toBe('complete');
      expect(await progress.getByTestId('job-retries').count()).toBe(0);
      expect(await progress.getByTestId('count-valid').textContent()).toBe('2');
      expect(await row.getByRole('button', { name: 'CSV' }).isDisabled()).toBe(false);
      // carol was asked twice: greylisted, then accepted on the retry (the other RCPT is the catch-all probe).
      expect(grey.rcpts().filter((rcpt) => rcpt.toLowerCase() === 'carol@grey.test')).toHaveLength(2);
      await page.screenshot({ path: join(SHOTS, 'job-complete.png'), fullPage: true });
      expect(dialogs).toEqual([]);
      await page.context().close();
    } finally {
      await waiting.close();
      await jobs.close();
      await grey.close();
    }
  }, 90_000);

  it('finishes a job now: "Finish now" next to the retry line, confirmed, ends the wait with the greylisted verdict', async () => {
    const grey = await startSmtpServer({
      host: '127.0.0.4',
      port: smtp.port,
      greylistClientMs: 3_600_000, // 451 for the whole test
      mailboxes: { carol: 'ok' },
    });
    const jobs = new BulkJobManager({
      verifierOptions: verifierOptions(),
      greylistRetry: { delaysMs: [3_600_000] },
    });
    const waiting = await createServer({
      port: 0,
      host: '127.0.0.1',
      apiKeys: [KEY],
      console: { dir: DIST_CONSOLE_DIR },
      limits: { requestsPerSecond: 10_000, burst: 10_000 },
      jobs,
      verifierOptions: verifierOptions(),
    });
    try {
      const { page, dialogs } = await signedIn(waiting.url);
      await page.getByLabel('Drop a CSV or TXT file here, or choose one').setInputFiles({
        name: 'finish.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('alice@good.test\ncarol@grey.test\n'),
      });
      await page.getByRole('button', { name: 'Start verification' }).click();
      const progress = page.locator('#bulk');
      const retries = progress.getByTestId('job-retries');
      await expect.poll(() => retries.textContent(), { timeout: 30_000 }).toMatch(/^1 address retries at /);
      const row = page.getByTestId('job-row').filter({ hasText: 'finish.txt' });
      await expect.poll(() => row.getByTestId('job-row-state').textContent()).toBe('processing');
      await page.screenshot({ path: join(SHOTS, 'job-finish-now.png'), fullPage: true });
      await progress.getByRole('button', { name: 'Finish now' }).click();
      await expect
        .poll(() => progress.getByTestId('job-status').textContent(), { timeout: 10_000 })
        .toBe('complete');
      expect(dialogs).toEqual([
        'confirm: Finish the job now? The address that waits for a greylisting retry keeps the verdict unknown (greylisted); no retry is made.',
      ]);
      expect(await progress.getByTestId('job-retries').count()).toBe(0);
      expect(await progress.getByRole('button', { name: 'Finish now' }).count()).toBe(0);
      expect(await progress.getByTestId('count-unknown').textContent()).toBe('1');
      await expect
        .poll(() => row.getByTestId('job-row-state').textContent(), { timeout: 10_000 })
        .toBe('complete');
      const { jobs: listed } = (await (
        await fetch(`${waiting.url}/v1/bulk`, { headers: { authorization: `Bearer ${KEY}` } })
      ).json()) as { jobs: { id: string }[] };
      const results = (await (
        await fetch(`${waiting.url}/v1/bulk/${listed[0]!.id}/results`, {
          headers: { authorization: `Bearer ${KEY}` },
        })
      ).json()) as { results: { email: string; sub_status: string | null; reason?: string }[] };
      expect(results.results[1]).toMatchObject({ email: 'carol@grey.test', sub_status: 'greylisted' });
      expect(results.results[1]!.reason).toMatch(
        /; not retried: the job was finished before the retry due at \d\d:\d\d UTC$/,
      );
      expect(grey.rcpts().filter((rcpt) => rcpt.toLowerCase() === 'carol@grey.test')).toHaveLength(1);
      expect(await seriousViolations(page)).toEqual([]);
      await page.context().close();
    } finally {
      await waiting.close();
      await jobs.close();
      await grey.close();
    }
  }, 90_000);
  it('works with a key that lacks scopes: it signs in, and a panel the key may not use shows the 403 message', async () => {
    const limited = await createServer({
      port: 0,
      host: '127.0.0.1',
      console: { dir: DIST_CONSOLE_DIR },
      verifierOptions: verifierOptions(),
      authenticate: (request) =>
        request.headers.get('authorization') === `Bearer ${KEY}`
          ? { tenant: 'verify-only', keyId: 'abcd1234', scopes: ['verify'] }
          : null,
    });
    try {
      const { page } = await signedIn(limited.url);
      // The Jobs list (GET /v1/bulk) needs bulk:read; verifying one address still works.
      await expect
        .poll(() => page.getByRole('alert').allTextContents())
        .toContain('this API key lacks the scope bulk:read (it has: verify)');
      expect(await (await verify(page, 'alice@good.test')).getByTestId('status').count()).toBeGreaterThan(0);
      await page.context().close();
    } finally {
      await limited.close();
    }
  });
});
