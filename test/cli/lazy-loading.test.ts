/**
 * What the built `mailvet` loads (issue 30, cold start): scripts call `mailvet verify` once per address, so a
 * command must load only the code it runs. Structural, not timed: the spawned bin runs under a module-load trace
 * (test/support/module-trace.mjs) and the test reads which files it loaded. The CLI is bundled
 * (scripts/bundle-cli.mjs): a loaded file of dist/cli holds the modules named by its `// dist/...` comments,
 * and those are what the test checks, as if each module were still its own file.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { run } from '../support/mailvet-bin.js';
import { tempDir } from './support.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TRACE_HOOK = join(ROOT, 'test', 'support', 'module-trace.mjs');

/** Code that `verify` never runs: the servers, job stores, fleet, console, doctor and webhooks. */
const NOT_FOR_VERIFY = [
  /^dist\/(http|bulk|bullmq|postgres|console|doctor|webhooks|metrics)\//,
  /^dist\/cli\/(bulk|serve|doctor|doctor-render|worker|fleet|store|progress|output|webhook-settings|metrics)\.js$/,
  /^node_modules\/(socks|ip-address|smart-buffer|hono|@hono|pg|@electric-sql|bullmq|ioredis|pino|prom-client)\//,
];

/**
 * Code a verification without DNS never runs, imported on first use (issue 30, cold start): the SMTP probe (the
 * check's work, reply classification, the prober, its pool and sessions), Node's TCP transport and the cached node:dns resolver.
 */
const NOT_WITHOUT_DNS = [
  /^dist\/checks\/smtp-probe\.js$/,
  /^dist\/smtp\/(prober|pool|session|catch-all|tcp|connect|line-channel)\.js$/,
  /^dist\/classify\/(reply|profiles|provider)\.js$/,
  /^dist\/classify\/reply-meaning\//,
  /^dist\/smtp\/(pool|session)\//,
  /^dist\/dns\/(node|cached)\.js$/,
  /^node_modules\/(lru-cache|p-limit)\//,
];

let dir: Awaited<ReturnType<typeof tempDir>>;
let traces = 0;
beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the spawned bin runs dist/
beforeAll(async () => {
  dir = await tempDir('mailvet-lazy-');
});
afterAll(async () => {
  await dir.remove();
});

/** The line esbuild writes before each module's code in an unminified bundle: `// dist/verifier.js`. */
const MODULE_COMMENT = /^\/\/ ((?:dist|node_modules)\/\S+\.[cm]?js)$/gm;

/** The modules in a loaded file, relative to the checkout: those a bundle's comments name, else the file itself. */
async function modulesIn(path: string): Promise<string[]> {
  const relative = path.slice(ROOT.length);
  if (!relative.startsWith('dist/cli/')) return [relative];
  const named = [...(await readFile(path, 'utf8')).matchAll(MODULE_COMMENT)].map((match) => match[1] ?? '');
  return named.length === 0 ? [relative] : named;
}

/** Runs the bin under the trace; returns its exit, the loaded files and the modules they hold. */
async function traced(args: string[]) {
  traces += 1;
  const file = dir.file(`trace-${traces}.txt`);
  const exit = await run(args, { nodeArgs: ['--import', TRACE_HOOK], env: { MAILVET_MODULE_TRACE: file } });
  const urls = (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '');
  const files = urls
    .filter((url) => url.startsWith('file:'))
    .map((url) => fileURLToPath(url))
    .filter((path) => path.startsWith(ROOT));
  const loaded = [...new Set((await Promise.all(files.map(modulesIn))).flat())];
  const builtins = urls.filter((url) => url.startsWith('node:'));
  return { exit, files: files.map((path) => path.slice(ROOT.length)), loaded, builtins };
}

describe('mailvet loads only what a command runs', () => {
  it('verify --no-dns loads the engine, and no SMTP, DNS, server, store, fleet, console, doctor or proxy code', async () => {
    const { exit, files, loaded, builtins } = await traced(['verify', '--no-dns', 'a@b.com']);
    expect(exit.code).toBe(EXIT.notValid);
    // Bundled: the engine and the two packages it needs (tldts, punycode) come from dist/cli's files, a few
    // chunks rather than a file per module.
    expect(files.filter((path) => !path.startsWith('dist/cli/'))).toEqual([]);
    expect(files.length).toBeLessThan(loaded.length / 2);
    expect(exit.stdout).toMatch(/^a@b\.com {2}unknown {2}score \d+\n/);
    // The trace sees what verify does load, so an empty or broken trace cannot pass.
    expect(loaded).toEqual(
      expect.arrayContaining(['dist/cli/verify.js', 'dist/verifier.js', 'dist/data/disposable.js']),
    );
    expect(loaded.filter((path) => NOT_FOR_VERIFY.some((pattern) => pattern.test(path)))).toEqual([]);
    expect(loaded.filter((path) => NOT_WITHOUT_DNS.some((pattern) => pattern.test(path)))).toEqual([]);
    expect(builtins).toContain('node:net'); // seen by the trace, like the files
    expect(builtins).not.toContain('node:tls'); // STARTTLS never happens offline
    expect(builtins).not.toContain('node:crypto'); // nor a DNS query of its own
  });

  it('--version loads neither the engine nor its data', async () => {
    const { exit, loaded } = await traced(['--version']);
    expect(exit.code).toBe(EXIT.ok);
    expect(exit.stdout).toMatch(/^mailvet \d+\.\d+\.\d+/);
    expect(loaded).toContain('dist/cli/main.js');
    expect(loaded.filter((path) => !path.startsWith('dist/cli/') && path !== 'dist/errors.js')).toEqual([]);
  });
});
