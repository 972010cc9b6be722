/**
 * Runs the built `mailvet` bin (dist/; a test file that uses it calls
 * `beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS)` from ./built-dist.js) as a child process, for tests of the CLI
 * as users run it.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built bin. */
export const BIN = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));

/** How a spawned `mailvet` ended. */
export interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Starts `mailvet args` with only PATH and `env` in its environment; stdin stays open. */
export function start(args: string[], options: { env?: Record<string, string>; nodeArgs?: string[] } = {}) {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<Exit>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, exited, stdout: () => stdout };
}

/** Runs `mailvet args` to its end, with `stdin` (default empty) as its input. */
export function run(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string; nodeArgs?: string[] } = {},
) {
  const started = start(args, options);
  started.child.stdin.end(options.stdin ?? '');
  return started.exited;
}
