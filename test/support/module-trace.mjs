/**
 * `node --import ./test/support/module-trace.mjs`: appends the URL of every module the process loads through the
 * ES module loader (mailvet's own files, packages imported from them, `node:` built-ins) to the file named by
 * MAILVET_MODULE_TRACE, one per line, as it loads. A structural view of what a command loads, for tests that
 * guard lazy loading without timing anything. Plain JavaScript: Node runs it before any TypeScript loader.
 */
import { register } from 'node:module';

const file = process.env.MAILVET_MODULE_TRACE;
if (file === undefined || file === '')
  throw new Error('module-trace: set MAILVET_MODULE_TRACE to a file path');
register('./module-trace-hooks.mjs', import.meta.url, { data: { file } });
