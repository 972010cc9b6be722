/**
 * The docs say what the program does: every flag of `mailvet <command> --help` is in docs/cli.md (in its
 * command's section, or the shared verification table) and every flag a docs table names exists; the columns
 * `mailvet bulk` and `GET /v1/bulk/{id}/results` really write are the ones docs/cli.md and docs/http.md list; the
 * marks `mailvet doctor` prints are the ones its docs show; README's field list is a result's fields.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BulkJobManager } from '../src/bulk/manager.js';
import type { Job } from '../src/bulk/types.js';
import { renderDiagnostics } from '../src/cli/doctor-render.js';
import { createStyle } from '../src/cli/style.js';
import { makeCheck } from '../src/doctor/check.js';
import { createHandler } from '../src/http/handler.js';
import { ROUTES } from '../src/http/routes.js';
import { RESULT_FIELDS } from '../src/result.js';
import { createVerifier } from '../src/verifier.js';
import { runCli } from './cli/support.js';
import { waitFor } from './support/wait-for.js';

const doc = (name: string) => readFileSync(new URL(`../${name}`, import.meta.url), 'utf8');
const CLI_MD = doc('docs/cli.md');

const COMMANDS = ['verify', 'bulk', 'serve', 'doctor', 'worker'] as const;

/** The long flags a help text lists under `Flags:` (without --help); `''` for `mailvet --help` itself. */
async function helpFlags(command: string): Promise<string[]> {
  const { stdout, code } = await runCli(command === '' ? ['--help'] : [command, '--help']);
  expect(code).toBe(0);
  const flags = [...stdout.matchAll(/^ {2,}(?:-\w, )?--([a-z][a-z0-9-]*)/gm)].map((match) => `--${match[1]}`);
  return flags.filter((flag) => flag !== '--help');
}

/** The `--flags` a piece of Markdown names. */
function flagsIn(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((match) => `--${match[1]}`));
}

/** The text of the section that starts at the line beginning with `heading`, up to the next heading of its level. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}`);
  expect(start, heading).toBeGreaterThan(-1);
  const level = /^#+/.exec(heading)?.[0] ?? '##';
  const rest = markdown.slice(start + 1 + heading.length);
  const next = rest.search(new RegExp(`\\n#{1,${level.length}} `));
  return next === -1 ? rest : rest.slice(0, next);
}

/** The table rows (lines starting with `|`) of a piece of Markdown. */
function tableRows(markdown: string): string {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .join('\n');
}

/** The comma-separated backticked list after `label` (`**CSV columns**: \`a, b, c\``). */
function listAfter(markdown: string, label: string): string[] {
  const at = markdown.indexOf(label);
  expect(at, label).toBeGreaterThan(-1);
  const list = /`([^`]+)`/.exec(markdown.slice(at + label.length))?.[1] ?? '';
  return list.split(/,\s*/).map((name) => name.trim());
}

describe('docs/cli.md and the flags of mailvet --help', () => {
  it('documents every flag of every command, in its section or in the shared verification table', async () => {
    const shared = flagsIn(tableRows(section(CLI_MD, '## Verification flags and environment')));
    const missing: string[] = [];
    for (const command of COMMANDS) {
      const own = flagsIn(section(CLI_MD, `### \`mailvet ${command}`));
      for (const flag of await helpFlags(command)) {
        if (!own.has(flag) && !shared.has(flag)) missing.push(`${command} ${flag}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('names no flag in a table that no command has', async () => {
    const known = new Set((await Promise.all(['', ...COMMANDS].map(helpFlags))).flat()); // top-level flags too
    const stale = [...flagsIn(tableRows(CLI_MD))].filter((flag) => !known.has(flag));
    expect(stale).toEqual([]);
  });

  it('documents every command and top-level flag of mailvet --help', async () => {
    const { stdout } = await runCli(['--help']);
    const listed = [...stdout.matchAll(/^ {2}([a-z]+) /gm)].map((match) => match[1]);
    expect(listed).toEqual([...COMMANDS]);
    for (const command of COMMANDS) expect(CLI_MD).toContain(`### \`mailvet ${command}`);
    const intro = CLI_MD.slice(0, CLI_MD.indexOf('\n## '));
    expect((await helpFlags('')).filter((flag) => !flagsIn(intro).has(flag))).toEqual([]);
  });

  it("has docs/doctor.md's flag table match mailvet doctor --help", async () => {
    const table = flagsIn(tableRows(section(doc('docs/doctor.md'), '## Flags')));
    const help = await helpFlags('doctor');
    const shared = flagsIn(tableRows(section(CLI_MD, '## Verification flags and environment')));
    expect([...table].filter((flag) => !help.includes(flag))).toEqual([]);
    expect(help.filter((flag) => !table.has(flag) && !shared.has(flag))).toEqual([]);
  });
});

describe('the result columns the CLI and the API write, and the docs that list them', () => {
  it('mailvet bulk writes the input columns, then the columns docs/cli.md lists', async () => {
    const run = await runCli(['bulk', '-', '--no-dns'], { stdin: 'email,note\na@example.com,x\n' });
    expect(run.code).toBe(0);
    const header = run.stdout.split('\r\n')[0]?.split(',') ?? [];
    const documented = listAfter(section(CLI_MD, '## `bulk` output'), '**CSV** (');
    expect(header).toEqual(['email', 'note', ...documented]);
  });

  it('GET /v1/bulk/{id}/results?format=csv writes the columns docs/http.md lists', async () => {
    const verifier = createVerifier({ dns: false });
    const jobs = new BulkJobManager({ verifier });
    const handler = createHandler({ apiKeys: ['k'], verifier, jobs });
    try {
      const headers = { authorization: 'Bearer k', 'content-type': 'application/json' };
      const created = await handler(
        new Request('http://h/v1/bulk', {
          method: 'POST',
          headers,
          body: JSON.stringify({ emails: ['a@example.com'] }),
        }),
      );
      const job = (await created.json()) as Job;
      const poll = () => handler(new Request(`http://h/v1/bulk/${job.id}`, { headers }));
      await waitFor(async () => ((await (await poll()).json()) as Job).status === 'complete', {
        what: 'the job to complete',
        intervalMs: 0,
      });
      const csv = await handler(new Request(`http://h/v1/bulk/${job.id}/results?format=csv`, { headers }));
      const header = (await csv.text()).split('\r\n')[0]?.split(',');
      expect(header).toEqual(listAfter(doc('docs/http.md'), '**CSV columns**:'));
    } finally {
      await handler.close();
      await jobs.close();
      await verifier.dispose();
    }
  });

  it('an uploaded CSV and mailvet bulk on the same CSV give one shape: the file, then the columns both docs list', async () => {
    // A file whose columns collide with result names (status) and hold the address under another name.
    const file = 'id,E-Mail,Status\r\n1,a@example.com,lead\r\n';
    const cli = await runCli(['bulk', '-', '--no-dns', '--column', 'E-Mail'], { stdin: file });
    expect(cli.code).toBe(0);
    const cliHeader = cli.stdout.split('\r\n')[0]?.split(',') ?? [];

    const verifier = createVerifier({ dns: false });
    const jobs = new BulkJobManager({ verifier });
    const handler = createHandler({ apiKeys: ['k'], verifier, jobs });
    try {
      const auth = { authorization: 'Bearer k' };
      const created = await handler(
        new Request('http://h/v1/bulk?column=E-Mail', {
          method: 'POST',
          headers: { ...auth, 'content-type': 'text/csv' },
          body: file,
        }),
      );
      expect(created.status).toBe(201);
      const job = (await created.json()) as Job;
      const poll = () => handler(new Request(`http://h/v1/bulk/${job.id}`, { headers: auth }));
      await waitFor(async () => ((await (await poll()).json()) as Job).status === 'complete', {
        what: 'the job to complete',
        intervalMs: 0,
      });
      const csv = await handler(
        new Request(`http://h/v1/bulk/${job.id}/results?format=csv`, { headers: auth }),
      );
      const [httpHeader, httpRow] = (await csv.text()).split('\r\n').map((line) => line.split(','));
      const documented = listAfter(doc('docs/http.md'), "**Columns after the file's**:").map((name) =>
        name === 'status' ? 'mailvet_status' : name,
      );
      expect(httpHeader).toEqual(['id', 'E-Mail', 'Status', ...documented]);
      expect(httpRow?.slice(0, 3)).toEqual(['1', 'a@example.com', 'lead']);
      expect(httpHeader).not.toContain('email');
      expect(httpHeader).not.toContain('mailvet_email');
      // mailvet bulk: the same columns, then only its own error column.
      expect(cliHeader).toEqual([...(httpHeader ?? []), 'error']);
      const cliDocumented = listAfter(section(CLI_MD, '## `bulk` output'), '**CSV** (');
      expect(cliHeader.slice(3)).toEqual(
        cliDocumented.map((name) => (name === 'status' ? 'mailvet_status' : name)),
      );
    } finally {
      await handler.close();
      await jobs.close();
      await verifier.dispose();
    }
  });

  it("README's library snippet lists a result's fields", () => {
    const readme = doc('README.md');
    const comment = /\/\/ \{ (email[^}]+)\}/.exec(readme.replace(/\n\/\/ {2,}/g, ' '))?.[1] ?? '';
    const fields = comment.split(/,\s*/).map((field) => field.trim().replace(/\?$/, ''));
    expect(fields).toEqual([...RESULT_FIELDS, 'reason']);
    // The first snippet sits under an offline quick start: it must not look anything up.
    expect(/await verify\(([^)]*)\)/.exec(readme)?.[1]).toBe("'someone@example.com', { dns: false }");
  });
});

describe("docs/http.md's routes table and the route table", () => {
  const HTTP_MD = doc('docs/http.md');
  const rows = [...tableRows(section(HTTP_MD, '## Routes')).matchAll(/^\| `([A-Z]+) ([^`?]+)/gm)].map(
    (match) => `${match[1]} ${match[2]}`,
  );

  it('has one row per route, and no row for a route that does not exist', () => {
    expect(rows.sort()).toEqual(ROUTES.map((route) => `${route.method} ${route.path}`).sort());
  });

  it('names every query parameter of every route', () => {
    const missing = ROUTES.flatMap((route) =>
      (route.parameters ?? [])
        .filter((param) => param.in === 'query')
        .filter((param) => !new RegExp(`[\`?&]${param.name}[\`=]`).test(HTTP_MD))
        .map((param) => `${route.method} ${route.path} ${param.name}`),
    );
    expect(missing).toEqual([]);
  });
});

describe('the marks mailvet doctor prints, and the docs that show them', () => {
  it('shows in docs/doctor.md and docs/cli.md only marks the renderer prints', () => {
    const report = {
      verdict: 'fail' as const,
      checks: (['pass', 'warn', 'fail', 'skipped'] as const).map((status) =>
        makeCheck('dns', status, 'evidence', status === 'pass' ? null : 'advice'),
      ),
      egress_ip: null,
      helo_host: 'h.example',
      mail_from: 'v@h.example',
      probe_domain: 'gmail.com',
      started_at: '2026-01-01T00:00:00.000Z',
      duration_ms: 1,
    };
    const marks = new Set(renderDiagnostics(report, createStyle(false)).match(/^\[[^\]]{4}\]/gm));
    expect(marks.size).toBe(4);
    const shown = (markdown: string) =>
      [...markdown.matchAll(/\[([ a-zA-Z]{4})\]/g)].map((match) => `[${match[1]}]`);
    const doctor = shown(doc('docs/doctor.md'));
    const cli = shown(section(CLI_MD, '### `mailvet doctor'));
    expect(doctor.length).toBeGreaterThan(0);
    expect([...doctor, ...cli].filter((mark) => !marks.has(mark))).toEqual([]);
    expect(cli.sort()).toEqual([...marks].sort());
  });
});
