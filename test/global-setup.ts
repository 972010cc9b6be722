import { execFileSync } from 'node:child_process';

/**
 * Builds dist/ once (the console included), so that tests of the spawned CLI run the real, built `mailvet` bin
 * and the browser tests get the console's bundle. A type error does
 * not stop the run here (tsc still emits); `npm run typecheck` is the gate for those.
 */
export default function setup(): void {
  try {
    execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'pipe' });
    execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'pipe' });
  } catch (error) {
    const output = (error as { stdout?: Buffer }).stdout?.toString() ?? '';
    process.stderr.write(
      `global-setup: tsc reported errors; dist/ may be incomplete\n${output.slice(0, 2000)}\n`,
    );
  }
}
