/**
 * docs/openapi.json as client authors use it: types generated with openapi-typescript's defaults, a client made
 * with openapi-fetch, the specification's flow (create with the sample body { name, emails }, add, poll, results)
 * type-checked with the TypeScript compiler and then run against a real server; the job's live progress read
 * through a standard EventSource client (the `eventsource` package).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventSource } from 'eventsource';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type RunningServer } from '../../src/http/node.js';
import { createVerifier } from '../../src/verifier.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const KEY = 'client-key';

/**
 * The flow a client author writes. Nothing but the generated types says what a body may hold: a field the
 * document wrongly marks required is a type error here.
 */
const FLOW = `
import createClient from 'openapi-fetch';
import type { paths } from './openapi-types.js';

export async function flow(baseUrl: string, key: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${key}\` } });
  const created = await client.POST('/v1/bulk', {
    body: { name: 'signups', emails: ['jane@example.com', 'bob@example.org'] },
  });
  if (created.data === undefined) throw new Error(\`create: \${created.response.status}\`);
  const id: string = created.data.id;
  const added = await client.POST('/v1/bulk/{id}/emails', {
    params: { path: { id } },
    body: { emails: ['x@@example.net'] },
  });
  if (added.data === undefined) throw new Error(\`add: \${added.response.status}\`);
  let status = added.data.status;
  for (let turn = 0; status !== 'complete' && turn < 1000; turn++) {
    const polled = await client.GET('/v1/bulk/{id}', { params: { path: { id } } });
    if (polled.data === undefined) throw new Error(\`poll: \${polled.response.status}\`);
    status = polled.data.status;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const results = await client.GET('/v1/bulk/{id}/results', {
    params: { path: { id }, query: { format: 'json', limit: 100 } },
  });
  // The route also answers CSV and NDJSON (text): a JSON page is the object among them.
  if (results.data === undefined || typeof results.data === 'string') throw new Error('no JSON page');
  return { id, status, results: results.data.results.map((result) => [result.email, result.status]) };
}

export async function quietJob(baseUrl: string, key: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${key}\` } });
  const created = await client.POST('/v1/bulk', { body: { emails: ['a@example.com'], auto_start: false } });
  if (created.data === undefined) throw new Error(\`create: \${created.response.status}\`);
  return {
    id: created.data.id,
    start: () => client.POST('/v1/bulk/{id}/start', { params: { path: { id: created.data.id } } }),
    finish: async () => (await client.POST('/v1/bulk/{id}/finish', { params: { path: { id: created.data.id } } })).response.status,
  };
}
`;

let dir: string;
let server: RunningServer;
let base: string;
const verifier = createVerifier({ dns: false });

beforeAll(async () => {
  // Inside the repository, so that 'openapi-fetch' resolves from its node_modules (*-tmp.* is git-ignored).
  dir = await mkdtemp(join(ROOT, 'test', 'client-tmp.'));
  const document = JSON.parse(await readFile(join(ROOT, 'docs', 'openapi.json'), 'utf8'));
  await writeFile(join(dir, 'openapi-types.ts'), astToString(await openapiTS(document)));
  await writeFile(join(dir, 'flow.ts'), FLOW);
  server = await createServer({ port: 0, host: '127.0.0.1', apiKeys: [KEY], verifier });
  base = server.url.replace(/\/$/, '');
}, 60_000);

afterAll(async () => {
  await server?.close();
  await verifier.dispose();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('a client generated from docs/openapi.json (openapi-typescript, openapi-fetch)', () => {
  it('type-checks the specification flow, whose create body is { name, emails } only', () => {
    const program = ts.createProgram([join(dir, 'flow.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
      types: [],
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    });
    const errors = ts
      .getPreEmitDiagnostics(program)
      .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    expect(errors).toEqual([]);
  }, 60_000);

  it('runs that flow against a real server', async () => {
    const { flow } = (await import(join(dir, 'flow.ts'))) as {
      flow(baseUrl: string, key: string): Promise<{ status: string; results: [string, string][] }>;
    };
    const outcome = await flow(base, KEY);
    expect(outcome.status).toBe('complete');
    expect(outcome.results).toEqual([
      ['jane@example.com', 'unknown'],
      ['bob@example.org', 'unknown'],
      ['x@@example.net', 'invalid'],
    ]);
  });

  it("follows the job's events with a standard EventSource client until the final event", async () => {
    const { quietJob } = (await import(join(dir, 'flow.ts'))) as {
      quietJob(
        baseUrl: string,
        key: string,
      ): Promise<{ id: string; start(): Promise<unknown>; finish(): Promise<number> }>;
    };
    const job = await quietJob(base, KEY);
    expect(await job.finish()).toBe(409); // not started: nothing to finish
    const source = new EventSource(`${base}/v1/bulk/${job.id}/events`, {
      fetch: (input, init) =>
        fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${KEY}` } }),
    });
    const seen: string[] = [];
    const ended = new Promise<{ status: string; completed: number }>((resolve, reject) => {
      source.addEventListener('progress', (event) => seen.push(JSON.parse(event.data).status));
      source.addEventListener('complete', (event) => resolve(JSON.parse(event.data)));
      source.addEventListener('error', (event) => reject(new Error(`EventSource: ${event.message}`)));
    });
    await new Promise<void>((resolve) => source.addEventListener('open', () => resolve(), { once: true }));
    await job.start();
    try {
      expect(await ended).toMatchObject({ status: 'complete', completed: 1 });
      expect(seen[0]).toBe('queued'); // the first event is the state when the stream opened
      expect(await job.finish()).toBe(200); // finish now on a complete job: answered as it is
    } finally {
      source.close();
    }
  });
});
