/**
 * Compiled mailvet for benchmarks: this checkout's `src/`, or the `src/` of another commit (`--against=<ref>`),
 * compiled with this checkout's TypeScript (`tsc -p tsconfig.build.json`, as `npm run build` does) into a
 * temporary directory that resolves packages from this checkout's node_modules, then the CLI bundled by that
 * side's scripts/bundle-cli.mjs where it has one (as its `npm run build` does), so that a benchmark measures
 * built JavaScript, before and after a change, and never a stale `dist/`.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The mailvet code a side loads: a directory of modules laid out as `src/` is, and their extension (`js` for
 * the compiled output of `tsc`, `ts` for the sources, which tsx transforms).
 */
export interface Code {
  readonly dir: string;
  readonly ext: 'js' | 'ts';
}

/** This checkout. */
export const REPO = fileURLToPath(new URL('..', import.meta.url));

/** A new temporary directory, listed in `made` (to be removed), that resolves packages from this checkout. */
export function temporary(made: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailvet-bench-'));
  made.push(dir);
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

/**
 * Compiles the project `tsconfig` (a `tsconfig.build.json`, rootDir src) with this checkout's TypeScript into
 * `dir`/dist, as `npm run build` does into `dist/`, and returns the compiled code. Throws with tsc's output if
 * the compile fails.
 */
function build(what: string, tsconfig: string, dir: string): Code {
  const out = join(dir, 'dist');
  const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', tsconfig, '--outDir', out, '--declaration', 'false'], {
      cwd: dir,
      stdio: 'pipe',
    });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: Buffer | string; stderr?: Buffer | string };
    throw new Error(`tsc -p tsconfig.build.json could not compile ${what}:\n${stdout}${stderr}`.trimEnd());
  }
  return { dir: out, ext: 'js' };
}

/** The CLI's bundler, relative to a checkout; a commit without it runs the CLI as tsc wrote it. */
const BUNDLER = join('scripts', 'bundle-cli.mjs');

/** Bundles the CLI of `code` (compiled into `dir`/dist) with `bundler`, as `npm run build` does after tsc. */
function bundleCli(what: string, bundler: string, code: Code): Code {
  try {
    execFileSync(process.execPath, [bundler, code.dir], { stdio: 'pipe' });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: Buffer | string; stderr?: Buffer | string };
    throw new Error(`${BUNDLER} could not bundle the CLI of ${what}:\n${stdout}${stderr}`.trimEnd());
  }
  return code;
}

/** How a side is built. */
export interface BuildOptions {
  /**
   * Bundle the CLI as `npm run build` does (default `true`). A benchmark that imports modules of `src/cli/` one by
   * one (the request logger) needs them as tsc wrote them: the bundle leaves only `bin.js` and its chunks.
   */
  readonly bundleCli?: boolean;
}

/** This checkout's `src/`, compiled into a temporary directory beside a copy of its package.json. */
export function buildCheckout(made: string[], options: BuildOptions = {}): Code {
  const dir = temporary(made);
  copyFileSync(join(REPO, 'package.json'), join(dir, 'package.json'));
  const code = build('this checkout', join(REPO, 'tsconfig.build.json'), dir);
  return options.bundleCli === false ? code : bundleCli('this checkout', join(REPO, BUNDLER), code);
}

/** True when commit `ref` has `path`. */
function hasFile(ref: string, path: string): boolean {
  try {
    execFileSync('git', ['-C', REPO, 'cat-file', '-e', `${ref}:${path}`], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Extracts `src/`, package.json, the tsconfig files and the CLI's bundler (where it has one) of commit `ref`
 * into a temporary directory, compiles them there and bundles the CLI.
 */
export function buildRef(ref: string, made: string[], options: BuildOptions = {}): Code {
  const dir = temporary(made);
  const bundled = options.bundleCli !== false && hasFile(ref, BUNDLER);
  const files = [
    'src',
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
    ...(bundled ? [BUNDLER] : []),
  ];
  let archive: Buffer;
  try {
    archive = execFileSync('git', ['-C', REPO, 'archive', ref, ...files], {
      maxBuffer: 1 << 30,
      stdio: 'pipe',
    });
  } catch (error) {
    throw new Error(
      `git archive could not extract ${files.join(', ')} of ${ref}:\n${(error as { stderr?: Buffer }).stderr ?? ''}`.trimEnd(),
    );
  }
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  const code = build(`--against=${ref}`, join(dir, 'tsconfig.build.json'), dir);
  return bundled ? bundleCli(`--against=${ref}`, join(dir, BUNDLER), code) : code;
}
