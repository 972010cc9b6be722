/**
 * Bundles the `mailvet` command (issue 30, cold start): esbuild reads dist/cli/bin.js as tsc wrote it, with every
 * mailvet module it reaches, and writes dist/cli again as bin.js plus chunks that the commands' lazy imports load
 * (`mailvet verify` loads the engine's chunks, never the server's, the stores' or the fleet's). A process that
 * loads ~20 files instead of ~75 spends far less of its start resolving, reading and linking modules, and
 * `mailvet verify` runs once per address in scripts. Run by `npm run build` after tsc; bench/compile.ts runs it on
 * the code it measures too.
 *
 * - Every file stays in dist/cli (no subdirectory), so a module's `new URL('../x', import.meta.url)` still points
 *   where it did (dist/package.json for `--version`, dist/console for `serve`).
 * - Not minified: each module's code keeps its `// dist/...` path comment, from which
 *   test/cli/lazy-loading.test.ts reads what a command loaded.
 * - Packages stay imports (optional peers such as pg and bullmq must), except the two on the verify path that are
 *   small and pure: tldts (through `#tldts`, its ESM build as Node resolves it) and punycode (CommonJS, which
 *   would load Node's CommonJS lexer).
 * - The library (dist/index.js and the other entries of the exports map) is untouched.
 *
 *   node scripts/bundle-cli.mjs [dist directory, default dist/ beside scripts/]
 */
import { rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** Package imports bundled into the CLI; any other bare import stays an import. */
const BUNDLED = new Set(['#tldts', 'punycode/punycode.js']);

const dist = resolve(process.argv[2] ?? fileURLToPath(new URL('../dist', import.meta.url)));
const root = dirname(dist);
const cli = join(dist, 'cli');
const staging = join(dist, '.cli-bundle');
await rm(staging, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: [join(cli, 'bin.js')],
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // `#tldts` as Node resolves it on Node 20.19+ (the ESM build), not the CommonJS fallback.
  conditions: ['module-sync'],
  outdir: staging,
  entryNames: '[name]',
  chunkNames: '[name]-[hash]',
  metafile: true,
  logLevel: 'warning',
  plugins: [
    {
      name: 'packages-stay-imports',
      setup(builder) {
        builder.onResolve({ filter: /^[^./]/ }, (args) =>
          BUNDLED.has(args.path) ? undefined : { path: args.path, external: true },
        );
      },
    },
  ],
});
await rm(cli, { recursive: true, force: true });
await rename(staging, cli);
console.log(`cli: dist/cli/bin.js and ${Object.keys(result.metafile.outputs).length - 1} chunks`);
