import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from './support/built-dist.js';

const run = promisify(execFile);

interface PackedFile {
  readonly path: string;
}

beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the exports map names dist/
describe('the published package', () => {
  it('ships the LICENSE that package.json promises, the README and the docs', async () => {
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: process.cwd(),
    });
    const [pack] = JSON.parse(stdout) as { files: PackedFile[] }[];
    const paths = pack?.files.map((file) => file.path) ?? [];
    const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { license: string };
    expect(pkg.license).toBe('MIT');
    expect(paths).toContain('LICENSE');
    expect(paths).toContain('README.md');
    expect(paths).toContain('docs/openapi.json');
    expect(paths.filter((path) => path.startsWith('src/'))).toEqual([]);
    expect(paths.filter((path) => path.endsWith('.map'))).toEqual([]);
    expect(await readFile('LICENSE', 'utf8')).toMatch(/^MIT License/);
  });

  it('builds no source or declaration maps, since the sources they point at are not shipped', async () => {
    const build = JSON.parse(await readFile('tsconfig.build.json', 'utf8')) as {
      compilerOptions: Record<string, unknown>;
    };
    expect(build.compilerOptions.sourceMap).not.toBe(true);
    expect(build.compilerOptions.declarationMap).not.toBe(true);
    expect(build.compilerOptions.inlineSourceMap).not.toBe(true);
  });

  it('exports mailvet/bullmq, whose bullmq and ioredis are optional peers that only it loads', async () => {
    const pkg = JSON.parse(await readFile('package.json', 'utf8')) as {
      exports: Record<string, unknown>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
      dependencies: Record<string, string>;
    };
    expect(pkg.exports['./bullmq']).toEqual({
      types: './dist/bullmq/index.d.ts',
      default: './dist/bullmq/index.js',
    });
    for (const name of ['bullmq', 'ioredis']) {
      expect(pkg.peerDependencies[name]).toBeDefined();
      expect(pkg.peerDependenciesMeta[name]?.optional).toBe(true);
      expect(pkg.dependencies[name]).toBeUndefined();
    }
    // Through a URL: dist/ is built (when stale) by ensureBuiltDist above.
    const built = new URL('../dist/bullmq/index.js', import.meta.url).href;
    const entry = (await import(built)) as Record<string, unknown>;
    expect(typeof entry.bullmqRunner).toBe('function');
    expect(typeof entry.createWorker).toBe('function');
    // Outside dist/bullmq, nothing names the packages. The CLI reaches them through dist/bullmq, lazily: its
    // bundle (scripts/bundle-cli.mjs) holds that code in the chunk named after dist/bullmq/index.js, which only
    // import() loads.
    const offenders: string[] = [];
    for (const file of await readdir('dist', { recursive: true })) {
      if (!file.endsWith('.js') || file.startsWith('bullmq/')) continue;
      const text = await readFile(join('dist', file), 'utf8');
      if (/^cli\/bullmq-\w+\.js$/.test(file)) expect(text).toMatch(/^\/\/ dist\/bullmq\/\S+\.js$/m);
      else if (/['"](bullmq|ioredis)['"]/.test(text)) offenders.push(file);
      if (/(from|import) ["']\.\/bullmq-/.test(text)) offenders.push(`${file} imports dist/bullmq eagerly`);
    }
    expect(offenders).toEqual([]);
  });
});
