/**
 * The built `mailvet bulk` on a real pseudo-terminal (util-linux `script`), so the progress line is fitted to the
 * width the terminal reports through `process.stderr.columns`, as a user's terminal does.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plain } from '../../src/cli/style.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { BIN } from '../support/mailvet-bin.js';
import { tempDir } from './support.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS);
beforeAll(async () => {
  dir = await tempDir('mailvet-spawn-progress-');
});
afterAll(async () => {
  await dir.remove();
});

/** Runs `mailvet bulk` on a pseudo-terminal `columns` wide; returns what the terminal received. */
async function onTerminal(columns: number, list: string, out: string): Promise<string> {
  const quoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
  const command = `stty cols ${columns} rows 24; exec ${quoted(process.execPath)} ${quoted(BIN)} bulk ${quoted(list)} --no-dns -o ${quoted(out)}`;
  const { stdout } = await promisify(execFile)('script', ['-qfec', command, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', TERM: 'xterm' },
  });
  return stdout;
}

/** The progress frames: cli-progress starts each at column 1 (ESC [1G) and clears the rest (ESC [0K). */
function frames(terminal: string): string[] {
  return terminal
    .split('\u001b[1G')
    .slice(1)
    .map((frame) => plain(frame.split('\u001b[0K')[0] ?? ''));
}

describe('mailvet bulk on a terminal (spawned)', () => {
  it.each([40, 60])(
    'fits every frame of the progress line to %i columns without cutting a count',
    async (columns) => {
      const list = dir.file(`list-${columns}.csv`);
      await writeFile(
        list,
        'email\nbad@@x\na@example.com\nx@mailinator.com\nno-at-sign\nb@example.com\ny@mailinator.com\n',
      );
      const shown = frames(await onTerminal(columns, list, dir.file(`out-${columns}.csv`)));
      expect(shown.length).toBeGreaterThan(0);
      for (const frame of shown) expect(frame.length).toBeLessThan(columns);
      expect(shown.at(-1)).toMatch(/^6\/6 .*\| inv 2 unk 2 dnm 2$/);
    },
  );
});
