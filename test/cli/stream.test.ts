/**
 * Streaming: the built `mailvet bulk` (dist/cli/bin.js) on a large file, with a heap cap and its peak RSS
 * compared with a run on a tenth of the file. The window bound itself is tested in pipeline.test.ts.
 */
import { spawn } from 'node:child_process';
import { stat, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { BIN } from '../support/mailvet-bin.js';
import { tempDir } from './support.js';

function run(nodeArgs: string[], args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [...nodeArgs, BIN, ...args], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the spawned bin runs dist/
beforeAll(async () => {
  dir = await tempDir('mailvet-stream-');
});
afterAll(async () => {
  await dir.remove();
});

describe('mailvet bulk streams large files', () => {
  /** Preloaded into the child: prints its peak RSS (KiB) on exit. */
  const MAX_RSS =
    'data:text/javascript,process.on("exit",()=>process.stderr.write("maxrss="+process.resourceUsage().maxRSS+"\\n"))';

  async function peakRss(lines: number): Promise<{ kb: number; outBytes: number }> {
    const input = dir.file(`stream-${lines}.txt`);
    await writeFile(
      input,
      Array.from({ length: lines }, (_, index) => `user${index}@domain${index % 5000}.com\n`).join(''),
    );
    const out = dir.file(`stream-${lines}.csv`);
    // The heap cap is far below what 200,000 results would need in memory.
    const result = await run(
      ['--max-old-space-size=48', '--import', MAX_RSS],
      ['bulk', input, '-o', out, '--no-dns'],
    );
    expect(result.code, result.stderr).toBe(EXIT.ok);
    expect(result.stderr).toContain(`${lines} rows verified in`);
    return { kb: Number(/maxrss=(\d+)/.exec(result.stderr)?.[1]), outBytes: (await stat(out)).size };
  }

  it('verifies 200,000 lines with memory that does not grow with the file', async () => {
    const small = await peakRss(20_000);
    const large = await peakRss(200_000);
    const growthBytes = (large.kb - small.kb) * 1024;
    // Holding the results as objects would take several times the output file's bytes (and would not fit under the
    // heap cap); the growth stays below the file's size. Not half of it: when the young generation's collections
    // fall against the end of a run is up to the machine's load: a full suite's run grew 16 MB of 27.
    expect(growthBytes).toBeLessThan(large.outBytes);
  }, 60_000);
});
