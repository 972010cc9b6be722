/**
 * The module hooks of ./module-trace.mjs (they run on Node's hooks thread): every loaded URL goes to the trace
 * file, written synchronously so that nothing is lost when the process exits.
 */
import { appendFileSync } from 'node:fs';

let file = '';

/** Receives the trace file's path from ./module-trace.mjs. */
export function initialize(data) {
  file = data.file;
}

/** Records the URL, then loads the module as Node would. */
export async function load(url, context, nextLoad) {
  appendFileSync(file, `${url}\n`);
  return nextLoad(url, context);
}
