/**
 * Bundles the console (src/console) with esbuild into dist/console: assets named by content hash (served with
 * long cache headers) and an index.html that names them. Run by `npm run build`.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { build } from 'esbuild';

const out = new URL('../dist/console/', import.meta.url);
await rm(out, { recursive: true, force: true });
await mkdir(new URL('assets/', out), { recursive: true });
const result = await build({
  entryPoints: {
    app: new URL('../src/console/main.tsx', import.meta.url).pathname,
    styles: new URL('../src/console/styles.css', import.meta.url).pathname,
  },
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  entryNames: '[name]-[hash]',
  outdir: new URL('assets/', out).pathname,
  metafile: true,
  logLevel: 'warning',
  legalComments: 'linked',
});
const files = Object.keys(result.metafile.outputs).map((path) => path.split('/').at(-1));
const js = files.find((name) => name.startsWith('app-') && name.endsWith('.js'));
const css = files.find((name) => name.startsWith('styles-') && name.endsWith('.css'));
if (js === undefined || css === undefined) throw new Error('the console bundle is missing its JS or CSS');
const template = await readFile(new URL('../src/console/index.template.html', import.meta.url), 'utf8');
await writeFile(new URL('index.html', out), template.replace('__JS__', js).replace('__CSS__', css));
console.log(`console: dist/console/assets/${js}, ${css}`);
