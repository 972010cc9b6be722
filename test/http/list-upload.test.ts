import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/bulk/types.js';
import { createServer, type RunningServer } from '../../src/http/node.js';
import type { VerificationResult } from '../../src/result.js';
import { waitFor } from '../support/wait-for.js';
import { auth, fakeVerifier } from './support.js';

let server: RunningServer;
let base: string;

beforeAll(async () => {
  server = await createServer({
    port: 0,
    host: '127.0.0.1',
    apiKeys: ['test-key-a'],
    verifier: fakeVerifier(),
    limits: { requestsPerSecond: 10_000, burst: 10_000, maxListBytes: 4_000_000, maxListEmails: 50_000 },
  });
  base = server.url.replace(/\/$/, '');
});
afterAll(async () => {
  await server.close();
});

function upload(path: string, type: string, body: BodyInit): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { ...auth(), 'content-type': type },
    body,
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);
}

function finished(id: string): Promise<Job> {
  return waitFor(
    async () => {
      const job = (await (await fetch(`${base}/v1/bulk/${id}`, { headers: auth() })).json()) as Job;
      return job.status === 'complete' && job;
    },
    { what: `job ${id} to complete` },
  );
}

async function emailsOf(id: string): Promise<string[]> {
  const body = (await (await fetch(`${base}/v1/bulk/${id}/results`, { headers: auth() })).json()) as {
    results: VerificationResult[];
  };
  return body.results.map((result) => result.email);
}

async function jobCount(): Promise<number> {
  return ((await (await fetch(`${base}/v1/bulk`, { headers: auth() })).json()) as { total: number }).total;
}

describe('bulk lists uploaded as files (text/plain, text/csv), over a real socket', () => {
  it('creates a job from a plain-text list: one address a line, blank lines skipped, CRLF or LF', async () => {
    const response = await upload(
      '/v1/bulk?name=Liste%20M%C3%A4rz',
      'text/plain',
      'a@x.example\r\n\r\n b@y.example \n用户@例子.广告\n',
    );
    expect(response.status).toBe(201);
    const job = (await response.json()) as Job;
    expect(job).toMatchObject({ name: 'Liste März', status: 'queued', total: 3 });
    await finished(job.id);
    expect(await emailsOf(job.id)).toEqual(['a@x.example', 'b@y.example', '用户@例子.广告']);
  });

  it('finds the CSV address column by its header, or by ?column=, and keeps input order', async () => {
    const csv = 'Name;E-Mail;Notes\nJane;jane@x.example;"a; b"\nJo;jo@y.example;\n';
    const guessed = (await (await upload('/v1/bulk', 'text/csv; charset=utf-8', csv)).json()) as Job;
    await finished(guessed.id);
    expect(await emailsOf(guessed.id)).toEqual(['jane@x.example', 'jo@y.example']);
    const named = await upload('/v1/bulk?column=work', 'text/csv', 'home,work\nh@x.example,w@x.example\n');
    const job = (await named.json()) as Job;
    await finished(job.id);
    expect(await emailsOf(job.id)).toEqual(['w@x.example']);
  });

  it('streams a 40,000-address list in, and adds a list to an existing job (reopening it)', async () => {
    const emails = Array.from({ length: 40_000 }, (_, i) => `user${i}@d${i % 97}.example`);
    const encoder = new TextEncoder();
    let at = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= emails.length) return controller.close();
        controller.enqueue(encoder.encode(`${emails.slice(at, at + 1000).join('\n')}\n`));
        at += 1000;
      },
    });
    const created = (await (await upload('/v1/bulk?auto_start=true', 'text/plain', stream)).json()) as Job;
    expect(created.total).toBe(40_000);
    await finished(created.id);
    const added = await upload(`/v1/bulk/${created.id}/emails`, 'text/csv', 'email\nlast@x.example\n');
    expect(added.status).toBe(200);
    expect(await added.json()).toMatchObject({ total: 40_001 });
    await finished(created.id);
    const all = await emailsOf(created.id);
    expect(all).toHaveLength(40_001);
    expect(all.slice(0, 3)).toEqual(emails.slice(0, 3));
    expect(all.at(-1)).toBe('last@x.example');
  });

  it('waits in queued with auto_start=false', async () => {
    const job = (await (
      await upload('/v1/bulk?auto_start=false', 'text/plain', 'a@x.example\n')
    ).json()) as Job;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await (await fetch(`${base}/v1/bulk/${job.id}`, { headers: auth() })).json()).toMatchObject({
      status: 'queued',
      total: 1,
    });
  });

  it.each([
    [
      'a CSV without an address column',
      'text/csv',
      '',
      'first,last\nJane,Doe\n',
      400,
      /no email column .*the column parameter/,
    ],
    [
      'a missing ?column=',
      'text/csv',
      '?column=mail',
      'email\na@x.example\n',
      400,
      /column "mail" is not in the header/,
    ],
    [
      'a ?column= that names two columns',
      'text/csv',
      '?column=email',
      'email,EMAIL \na@x.example,b@x.example\n',
      400,
      /column "email" names columns 1, 2 of the header/,
    ],
    ['a malformed CSV row', 'text/csv', '', 'email,n\n"a@x.example,1\n', 400, /malformed CSV row|quote/],
    [
      'a line over 64 KiB',
      'text/plain',
      '',
      `${'a'.repeat(70_000)}@x.example\n`,
      400,
      /longer than the limit/,
    ],
    [
      'a bad auto_start',
      'text/plain',
      '?auto_start=yes',
      'a@x.example\n',
      400,
      /auto_start must be true or false/,
    ],
    [
      'a list over maxListEmails',
      'text/plain',
      '',
      'a@x.example\n'.repeat(50_001),
      413,
      /at most 50000 addresses/,
    ],
    [
      'a list over maxListBytes',
      'text/plain',
      '',
      `${'b@x.example\n'.repeat(400_000)}`,
      413,
      /exceeds 4000000 bytes/,
    ],
    ['a Latin-1 charset', 'text/plain; charset=latin1', '', 'a@x.example\n', 415, /UTF-8/],
  ])('refuses %s, and leaves no job behind', async (_, type, query, body, status, message) => {
    const before = await jobCount();
    const response = await upload(`/v1/bulk${query}`, type, body);
    expect(response.status).toBe(status);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(message);
    expect(await jobCount()).toBe(before);
  });

  it('makes an empty job from an empty list', async () => {
    const response = await upload('/v1/bulk', 'text/plain', '\n\n');
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ total: 0 });
  });
});

describe('a list upload at the job quota', () => {
  it('is refused with 429 before the list is read', async () => {
    const small = await createServer({
      port: 0,
      host: '127.0.0.1',
      apiKeys: ['test-key-a'],
      verifier: fakeVerifier(),
      limits: { maxJobsPerKey: 1 },
    });
    try {
      const url = small.url.replace(/\/$/, '');
      const first = await fetch(`${url}/v1/bulk`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'text/plain' },
        body: 'a@x.example\n',
      });
      expect(first.status).toBe(201);
      let pulled = 0;
      const endless = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled++;
          controller.enqueue(new TextEncoder().encode('b@x.example\n'.repeat(1000)));
          if (pulled > 50) controller.close();
        },
      });
      const second = await fetch(`${url}/v1/bulk`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'text/plain' },
        body: endless,
        duplex: 'half',
      } as RequestInit);
      expect(second.status).toBe(429);
      expect(((await second.json()) as { error: { code: string } }).error.code).toBe('limit_exceeded');
    } finally {
      await small.close();
    }
  });
});
