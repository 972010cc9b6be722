#!/usr/bin/env node
/**
 * The `mailvet` executable: runs {@link main} with the process's streams and environment. The first Ctrl-C
 * (or SIGTERM) asks the command to stop cleanly (`bulk` writes what is done); a second Ctrl-C exits at once. A
 * Ctrl-C while `bulk`'s rows wait for a greylisting retry finishes now instead (the next one stops).
 * @module
 */
import { EXIT, main } from './main.js';

const controller = new AbortController();
const onSignal = (): void => {
  if (controller.signal.aborted) process.exit(EXIT.interrupted);
  controller.abort();
};
/** A Ctrl-C a command takes (`bulk` while rows wait for a greylisting retry: finish now) stops nothing. */
const takers = new Set<() => boolean>();
const onInterrupt = (): void => {
  for (const taker of takers) if (taker()) return;
  onSignal();
};
process.on('SIGINT', onInterrupt);
process.on('SIGTERM', onSignal);

// A closed pipe (`mailvet bulk big.csv | head`) ends output quietly instead of failing.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
});

/** Standard input, made on first use: only `bulk -` reads it, and opening its stream costs every other command. */
let stdin: NodeJS.ReadStream | undefined;
process.exitCode = await main(process.argv.slice(2), {
  get stdin() {
    stdin ??= process.stdin;
    return stdin;
  },
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  stdoutIsTTY: process.stdout.isTTY === true,
  stderrIsTTY: process.stderr.isTTY === true,
  signal: controller.signal,
  interrupts: {
    take(taker) {
      takers.add(taker);
      return () => takers.delete(taker);
    },
  },
});
process.off('SIGINT', onInterrupt);
process.off('SIGTERM', onSignal);
// An interrupted `bulk -` may leave a read of standard input pending: release it so that the process can end.
stdin?.destroy();
