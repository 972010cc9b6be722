/**
 * The console's list-file reading (src/console/list-file.ts) in Node, without a browser: the rows it reads are
 * the API's, a file past the 64 MiB list limit is read a slice at a time into bounded batches, and a CSV file's
 * batches, sent as text/csv, come back in the server's CSV with the file's columns.
 */
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  fileRows,
  firstLine,
  headerLine,
  type ListRow,
  type ListShape,
  listBatches,
  listShape,
} from '../../src/console/list-file.js';
import { createServer, type RunningServer } from '../../src/http/node.js';
import { auth, fakeVerifier, jsonAuth } from '../http/support.js';
import { waitFor } from '../support/wait-for.js';

let server: RunningServer;
let base: string;

beforeAll(async () => {
  server = await createServer({
    port: 0,
    host: '127.0.0.1',
    apiKeys: ['test-key-a'],
    verifier: fakeVerifier(),
    limits: { requestsPerSecond: 10_000, burst: 10_000 },
  });
  base = server.url.replace(/\/$/, '');
});
afterAll(async () => {
  await server.close();
});

async function rowsOf(blob: Blob, shape: ListShape, sliceBytes?: number): Promise<ListRow[]> {
  const rows: ListRow[] = [];
  for await (const batch of fileRows(blob, shape, sliceBytes)) rows.push(...batch.rows);
  return rows;
}

async function finished(id: string): Promise<void> {
  await waitFor(
    async () => {
      const job = (await (await fetch(`${base}/v1/bulk/${id}`, { headers: auth() })).json()) as {
        status: string;
      };
      return job.status === 'complete';
    },
    { what: `job ${id} to complete` },
  );
}

describe('listShape', () => {
  it('tells text from CSV and finds the address column as mailvet bulk does', () => {
    expect(listShape('alice@example.com')).toMatchObject({
      format: 'text',
      columns: ['email'],
      emailIndex: 0,
    });
    expect(listShape('id,name,E-Mail,notes')).toEqual({
      format: 'csv',
      delimiter: ',',
      columns: ['id', 'name', 'E-Mail', 'notes'],
      emailIndex: 2,
      hasHeader: true,
    });
    expect(listShape('"Name";"Courriel"')).toMatchObject({ delimiter: ';', emailIndex: 1, hasHeader: true });
    // No header: the row holding an address is data; its columns get names.
    expect(listShape('7,alice@example.com,x')).toMatchObject({
      columns: ['column1', 'email', 'column3'],
      emailIndex: 1,
      hasHeader: false,
    });
    // A header without an address column: the user picks one.
    expect(listShape('id,name')).toMatchObject({ format: 'csv', emailIndex: -1, hasHeader: true });
    expect(listShape('a,b@example.com', { text: true }).format).toBe('text');
    expect(firstLine('\uFEFF\r\n\nemail\r\na@b.c')).toBe('email');
  });
});

describe('fileRows', () => {
  it("reads a CSV's rows as the API's list upload does (BOM, CRLF, quotes, blank lines, short rows)", async () => {
    const csv =
      '\uFEFFid,"name",email,notes\r\n' +
      '1,"Smith, Ann",ann@example.com,"two\r\nlines"\r\n' +
      '\r\n' +
      '2,Bob,bob@example.com\r\n' +
      '3,"He said ""hi""", carol@example.com ,<b>x</b>\r\n' +
      '4,,,\n' +
      '5,Eve,eve@example.com,last';
    const shape = listShape(firstLine(csv));
    const rows = await rowsOf(new Blob([csv]), shape, 7); // slices of 7 bytes: lines and characters cut
    const response = await fetch(`${base}/v1/bulk?auto_start=false`, {
      method: 'POST',
      headers: auth('test-key-a', { 'content-type': 'text/csv' }),
      body: csv,
    });
    expect(response.status).toBe(201);
    const job = (await response.json()) as { id: string; total: number };
    await fetch(`${base}/v1/bulk/${job.id}/start`, { method: 'POST', headers: auth() });
    await finished(job.id);
    const api = (await (await fetch(`${base}/v1/bulk/${job.id}/results`, { headers: auth() })).json()) as {
      results: { email: string }[];
    };
    expect(rows.map((row) => row.email.trim())).toEqual(api.results.map((result) => result.email));
    expect(rows.map((row) => row.cells)).toEqual([
      ['1', 'Smith, Ann', 'ann@example.com', 'two\r\nlines'],
      ['2', 'Bob', 'bob@example.com', ''],
      ['3', 'He said "hi"', ' carol@example.com ', '<b>x</b>'],
      ['4', '', '', ''],
      ['5', 'Eve', 'eve@example.com', 'last'],
    ]);
  });

  it('keeps a row it cannot read as a row whose address is its raw line (it fails the syntax check)', async () => {
    const csv = 'id,email\n1,"a@b.c"x\n2,a@b.c,extra\n3,ok@b.c\n';
    const rows = await rowsOf(new Blob([csv]), listShape('id,email'));
    expect(rows.map((row) => row.email)).toEqual(['1,"a@b.c"x', '2,a@b.c,extra', 'ok@b.c']);
    expect(rows[0]?.cells).toEqual(['', '1,"a@b.c"x']);
  });

  it('reads a text list line by line and cuts an over-long line instead of holding it', async () => {
    const text = `a@b.c\n\n  d@e.f  \n${'x'.repeat(200_000)}\ng@h.i`;
    const rows = await rowsOf(new Blob([text]), listShape('a@b.c'), 4096);
    expect(rows.map((row) => row.email)).toEqual(['a@b.c', 'd@e.f', 'x'.repeat(200), 'g@h.i']);
  });
});

describe('listBatches as text/csv bodies', () => {
  it("sends a CSV file's rows so that the server's CSV gives its columns back, row by row", async () => {
    // Semicolons, a quoted cell with the delimiter, quotes and a line break, a formula and a number.
    const csv =
      'id;name;Email;status\n1;"Smith; ""Ann""\nJr";ann@example.com;=SUM(A1)\n2;Bob;bad@example.com;-5.20\n3;Cy;noat;\n';
    const file = new Blob([csv]);
    const shape = listShape(firstLine(csv));
    const created = (await (
      await fetch(`${base}/v1/bulk`, {
        method: 'POST',
        headers: jsonAuth(),
        body: JSON.stringify({ name: 'rows', auto_start: false }),
      })
    ).json()) as { id: string };
    // Batches of two: the job is filled by several adds, as the console fills it.
    for await (const batch of listBatches(file, shape, { maxEmails: 2 })) {
      if (batch.emails.length === 0) continue;
      expect(batch.rows).toHaveLength(batch.emails.length);
      const added = await fetch(`${base}/v1/bulk/${created.id}/emails?column=Email`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'text/csv' },
        body: [headerLine(shape), ...(batch.rows ?? [])].join('\r\n'),
      });
      expect(added.status).toBe(200);
    }
    await fetch(`${base}/v1/bulk/${created.id}/start`, { method: 'POST', headers: auth() });
    await finished(created.id);
    const text = await (
      await fetch(`${base}/v1/bulk/${created.id}/results?format=csv`, { headers: auth() })
    ).text();
    const rows = parse(text) as string[][];
    expect(rows[0]?.slice(0, 6)).toEqual(['id', 'name', 'Email', 'status', 'normalized', 'user']);
    expect(rows.slice(1).map((row) => row.slice(0, 4))).toEqual([
      ['1', 'Smith; "Ann"\nJr', 'ann@example.com', "'=SUM(A1)"], // a formula is neutralised, a number is not
      ['2', 'Bob', 'bad@example.com', '-5.20'],
      ['3', 'Cy', 'noat', ''],
    ]);
    const status = rows[0]!.indexOf('mailvet_status');
    expect(rows.slice(1).map((row) => row[status])).toEqual(['valid', 'invalid', 'invalid']);
  });

  it('sends a text file as addresses alone', async () => {
    const batches = [];
    for await (const batch of listBatches(new Blob(['a@b.cc\nd@e.ff\n']), listShape('a@b.cc')))
      batches.push(batch);
    expect(batches.map((batch) => [batch.emails, batch.rows])).toEqual([[['a@b.cc', 'd@e.ff'], undefined]]);
  });
});

describe('listBatches', () => {
  it('reads a file over 64 MiB one slice at a time, in bounded batches, with the progress of each', async () => {
    const filler = 'x'.repeat(200);
    const count = 330_000;
    const parts = ['id,filler,email\n'];
    for (let i = 0; i < count; i++) parts.push(`${i},${filler},user${i}@example.test\n`);
    const file = new Blob(parts);
    parts.length = 0;
    expect(file.size).toBeGreaterThan(64 * 1024 * 1024);
    const slice = vi.spyOn(file, 'slice');
    const whole = [vi.spyOn(file, 'text'), vi.spyOn(file, 'arrayBuffer'), vi.spyOn(file, 'stream')];

    let emails = 0;
    let last = 0;
    let batches = 0;
    let progress = 0;
    for await (const batch of listBatches(file, listShape('id,filler,email'), { maxEmails: 5000 })) {
      expect(batch.emails.length).toBeLessThanOrEqual(5000);
      expect(batch.bytesRead).toBeGreaterThanOrEqual(progress);
      progress = batch.bytesRead;
      if (emails === 0) expect(batch.emails[0]).toBe('user0@example.test');
      emails += batch.emails.length;
      last = Number(batch.emails.at(-1)?.slice(4, -13) ?? last);
      batches++;
    }
    expect(emails).toBe(count);
    expect(last).toBe(count - 1);
    expect(progress).toBe(file.size);
    expect(batches).toBeGreaterThanOrEqual(count / 5000);
    // Every read is one slice of at most 1 MiB; the file is never read whole.
    expect(slice.mock.calls.length).toBe(Math.ceil(file.size / (1024 * 1024)));
    for (const [start = 0, end = 0] of slice.mock.calls) expect(end - start).toBeLessThanOrEqual(1024 * 1024);
    for (const spy of whole) expect(spy).not.toHaveBeenCalled();
  }, 60_000);

  it('starts a new batch before the characters of one would pass maxChars', async () => {
    const file = new Blob([['a@b.cc', 'dd@e.ff', 'g@h.ii', 'j@k.ll'].join('\n')]);
    const batches: string[][] = [];
    for await (const batch of listBatches(file, listShape('a@b.cc'), { maxChars: 13 }))
      batches.push(batch.emails);
    expect(batches).toEqual([
      ['a@b.cc', 'dd@e.ff'],
      ['g@h.ii', 'j@k.ll'],
    ]);
  });
});
