#!/usr/bin/env node
/**
 * The `mailvet` executable: runs {@link main} with the process's streams and environment. The first Ctrl-C
 * (or SIGTERM) asks the command to stop cleanly (`bulk` writes what is done); a second Ctrl-C exits at once.
 * @module
 */
import { EXIT, main } from './main.js';

const controller = new AbortController();
const onSignal = (): void => {
  if (controller.signal.aborted) process.exit(EXIT.interrupted);
  controller.abort();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

// A closed pipe (`mailvet bulk big.csv | head`) ends output quietly instead of failing.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
});

process.exitCode = await main(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  stdoutIsTTY: process.stdout.isTTY === true,
  stderrIsTTY: process.stderr.isTTY === true,
  signal: controller.signal,
});
process.off('SIGINT', onSignal);
process.off('SIGTERM', onSignal);
// An interrupted `bulk -` may leave a read of standard input pending: release it so that the process can end.
process.stdin.destroy();
