import { parse } from 'csv-parse/sync';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { memoryJobStore } from '../../src/bulk/memory-store.js';
import type { Job, JobStore } from '../../src/bulk/types.js';
import { createHandler, type Handler } from '../../src/http/handler.js';
import { CSV_COLUMNS, SOURCED_CSV_COLUMNS } from '../../src/io/result-csv.js';
import { pgliteStore, postgresStore } from '../../src/postgres/index.js';
import {
  dropPostgresSchema,
  openSharedPglite,
  PGLITE_OPEN_MS,
  POSTGRES_URL,
  sharedPglite,
  testSchema,
} from '../support/databases.js';
import { waitFor } from '../support/wait-for.js';
import { auth, fakeVerifier, KEY_A } from './support.js';

beforeAll(openSharedPglite, PGLITE_OPEN_MS); // its start, not a test's own time

/** A file with hostile cells: markup, quotes, commas, CR/LF in a quoted cell, unicode, a formula, numbers. */
const HEADER = ['id', 'Name', 'Email', 'note', '', 'status', 'note'];
const ROWS = [
  ['1', '<img src=x onerror=alert(1)>', 'a@example.com', 'say "hi", then go', '', 'vip', 'x'],
  ['2', 'Zoë 用户 🎉', 'b@example.org', 'line one\r\nline two\nthree', '', '', ''],
  ['3', '=cmd()', 'c@example.net', '+44 20 7946 0958', '-5.20', '@SUM(A1)', '@vip'],
  ['4', 'plain', ' d@example.com ', '', '', '', ''],
];

/** The file as a client would send it (RFC 4180, CRLF). */
function csvFile(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const cell = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
  return [header, ...rows].map((row) => row.map(cell).join(',')).join('\r\n');
}

/**
 * What the download gives back for an original cell: the `auto` formula rule; line breaks inside a quoted cell
 * as they were, CRLF or LF.
 */
function kept(cell: string): string {
  return cell === '=cmd()' || cell === '@SUM(A1)' ? `'${cell}` : cell;
}

/** The result columns after the file's: the address is not repeated (the file's Email column holds it). */
const RESULT_HEADER = SOURCED_CSV_COLUMNS.map((name) => (name === 'status' ? `mailvet_${name}` : name));

type Kind = 'memory' | 'pglite' | 'postgres';
const kinds: Kind[] = POSTGRES_URL === undefined ? ['memory', 'pglite'] : ['memory', 'pglite', 'postgres'];

describe.each(kinds)('a job made from a CSV body keeps its rows for the CSV download (%s store)', (kind) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** Opens a store of `kind` on `place` (a schema), a manager and a handler on it. */
  async function open(place: string): Promise<{ handler: Handler; close: () => Promise<void> }> {
    let store: JobStore;
    if (kind === 'memory') store = memoryJobStore();
    else if (kind === 'pglite') store = await pgliteStore({ db: await sharedPglite(), schema: place });
    else store = await postgresStore({ connectionString: POSTGRES_URL!, schema: place });
    const jobs = new BulkJobManager({ store, verifier: fakeVerifier() });
    const handler = createHandler({
      apiKeys: [KEY_A],
      jobs,
      limits: { requestsPerSecond: 10_000, burst: 10_000 },
    });
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await handler.close();
      await jobs.close();
    };
    cleanups.push(close);
    return { handler, close };
  }

  async function fresh(): Promise<Handler> {
    const schema = testSchema();
    if (kind === 'pglite')
      cleanups.push(
        async () => void (await (await sharedPglite()).query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)),
      );
    if (kind === 'postgres') cleanups.push(() => dropPostgresSchema(schema));
    return (await open(schema)).handler;
  }

  const post = (handler: Handler, path: string, type: string, body: string) =>
    handler(
      new Request(`http://localhost${path}`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': type },
        body,
      }),
    );

  function finished(handler: Handler, id: string): Promise<Job> {
    return waitFor(
      async () => {
        const job = (await (
          await handler(new Request(`http://localhost/v1/bulk/${id}`, { headers: auth() }))
        ).json()) as Job;
        return job.status === 'complete' && job;
      },
      { what: `job ${id} to complete` },
    );
  }

  async function download(handler: Handler, id: string, query = ''): Promise<string[][]> {
    const response = await handler(
      new Request(`http://localhost/v1/bulk/${id}/results?format=csv${query}`, { headers: auth() }),
    );
    expect(response.status).toBe(200);
    return parse(await response.text(), { relax_column_count: true }) as string[][];
  }

  it('gives the original columns back in order, hostile cells intact, then the result columns', async () => {
    const handler = await fresh();
    const created = await post(handler, '/v1/bulk?name=hostile', 'text/csv', csvFile(HEADER, ROWS));
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as Job;
    await finished(handler, id);
    const [header, ...rows] = await download(handler, id);
    expect(header).toEqual([...HEADER, ...RESULT_HEADER]);
    expect(rows).toHaveLength(ROWS.length);
    rows.forEach((row, i) => {
      expect(row.slice(0, HEADER.length)).toEqual(ROWS[i]!.map(kept));
      expect(row[HEADER.length]).toBe(ROWS[i]![2]!.trim()); // the result's normalized address
      expect(row).toHaveLength(HEADER.length + SOURCED_CSV_COLUMNS.length);
    });
    // The result columns alone, on request; the JSON results are unchanged.
    const [plainHeader, ...plainRows] = await download(handler, id, '&results_only=true');
    expect(plainHeader).toEqual([...CSV_COLUMNS]);
    expect(plainRows.map((row) => row[0])).toEqual(ROWS.map((row) => row[2]!.trim()));
    const json = (await (
      await handler(new Request(`http://localhost/v1/bulk/${id}/results`, { headers: auth() }))
    ).json()) as { results: Record<string, unknown>[] };
    expect(Object.keys(json.results[0]!)).not.toContain('Name');
  });

  it('keeps the rows across a restart of a durable store', async () => {
    if (kind === 'memory') return;
    const schema = testSchema();
    if (kind === 'postgres') cleanups.push(() => dropPostgresSchema(schema));
    else
      cleanups.push(
        async () => void (await (await sharedPglite()).query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)),
      );
    const first = await open(schema);
    const created = await post(first.handler, '/v1/bulk', 'text/csv', csvFile(HEADER, ROWS));
    const { id } = (await created.json()) as Job;
    await finished(first.handler, id);
    const before = await download(first.handler, id);
    await first.close();
    const second = await open(schema);
    expect(await download(second.handler, id)).toEqual(before);
    expect(before[1]!.slice(0, HEADER.length)).toEqual(ROWS[0]);
  });

  it('takes more rows with the same header, empty cells but the address for JSON and text adds; pages stay aligned', async () => {
    const handler = await fresh();
    const created = await post(
      handler,
      '/v1/bulk?auto_start=false',
      'text/csv',
      csvFile(HEADER, ROWS.slice(0, 2)),
    );
    const { id } = (await created.json()) as Job;
    const json = await handler(
      new Request(`http://localhost/v1/bulk/${id}/emails`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify({ emails: ['json@example.com'] }),
      }),
    );
    expect(json.status).toBe(200);
    expect((await post(handler, `/v1/bulk/${id}/emails`, 'text/plain', 'text@example.com\n')).status).toBe(
      200,
    );
    const more = await post(handler, `/v1/bulk/${id}/emails`, 'text/csv', csvFile(HEADER, ROWS.slice(2)));
    expect(more.status).toBe(200);
    expect(((await more.json()) as Job).total).toBe(6);
    await handler(new Request(`http://localhost/v1/bulk/${id}/start`, { method: 'POST', headers: auth() }));
    await finished(handler, id);
    const [, ...rows] = await download(handler, id);
    const blank = (email: string) => HEADER.map((_, i) => (i === 2 ? email : ''));
    expect(rows.map((row) => row.slice(0, HEADER.length))).toEqual([
      ROWS[0],
      ROWS[1]!.map(kept),
      blank('json@example.com'),
      blank('text@example.com'),
      ROWS[2]!.map(kept),
      ROWS[3],
    ]);
    const [pageHeader, ...page] = await download(handler, id, '&offset=3&limit=2');
    expect(pageHeader!.slice(0, HEADER.length)).toEqual(HEADER);
    expect(page.map((row) => row[0])).toEqual(['', '3']);
  });

  it('refuses a second CSV with another header (400, nothing added), and leaves plain jobs unchanged', async () => {
    const handler = await fresh();
    const created = await post(handler, '/v1/bulk?auto_start=false', 'text/csv', csvFile(HEADER, ROWS));
    const { id } = (await created.json()) as Job;
    const other = ['id', 'Name', 'Email', 'notes', '', 'status', 'note'];
    const refused = await post(handler, `/v1/bulk/${id}/emails`, 'text/csv', csvFile(other, ROWS));
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toContain('"notes" as column 4');
    const shorter = await post(handler, `/v1/bulk/${id}/emails`, 'text/csv', 'Email\r\nz@example.com');
    expect(shorter.status).toBe(400);
    const job = (await (
      await handler(new Request(`http://localhost/v1/bulk/${id}`, { headers: auth() }))
    ).json()) as Job;
    expect(job.total).toBe(ROWS.length);

    const plain = await handler(
      new Request('http://localhost/v1/bulk', {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify({ emails: ['p@example.com'] }),
      }),
    );
    const plainId = ((await plain.json()) as Job).id;
    await finished(handler, plainId);
    expect((await download(handler, plainId))[0]).toEqual([...CSV_COLUMNS]);
  });

  it('refuses rows past the limits with a 400 naming the line, and makes no job', async () => {
    const handler = await fresh();
    const wideHeader = Array.from({ length: 1001 }, (_, i) => (i === 0 ? 'email' : `c${i}`));
    const wide = await post(handler, '/v1/bulk', 'text/csv', csvFile(wideHeader, [['a@example.com']]));
    expect(wide.status).toBe(400);
    expect(((await wide.json()) as { error: { message: string } }).error.message).toContain('1001 columns');
    // A row of 70,000 characters, in a quoted cell spread over lines (each line under the 64 KiB line limit).
    const long = `${'x'.repeat(35_000)}\n${'y'.repeat(35_000)}`;
    const tooLong = await post(
      handler,
      '/v1/bulk',
      'text/csv',
      csvFile(
        ['email', 'blob'],
        [
          ['a@example.com', 'ok'],
          ['b@example.com', long],
        ],
      ),
    );
    expect(tooLong.status).toBe(400);
    expect(((await tooLong.json()) as { error: { message: string } }).error.message).toMatch(
      /row at line 3 is \d+ characters as a CSV line, at most 65536/,
    );
    const list = (await (
      await handler(new Request('http://localhost/v1/bulk', { headers: auth() }))
    ).json()) as {
      total: number;
    };
    expect(list.total).toBe(0);
  });
});
