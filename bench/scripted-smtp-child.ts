/**
 * Child process of {@link startScriptedHosts}: runs the scripted mail hosts given in argv and answers
 * `counters` and `close` messages from its parent.
 * @module
 */
import { type ScriptedHostSpec, startScriptedHost } from './scripted-smtp.js';

const { specs, delayMs } = JSON.parse(process.argv[2] ?? '{}') as {
  specs: ScriptedHostSpec[];
  delayMs: number;
};
const hosts = await Promise.all(specs.map((spec) => startScriptedHost(spec, delayMs)));
process.on('message', async (message) => {
  if (message === 'counters') {
    process.send?.({ kind: 'counters', counters: hosts.map((host) => host.counters()) });
  } else if (message === 'close') {
    await Promise.all(hosts.map((host) => host.close()));
    process.exit(0);
  }
});
process.send?.({ kind: 'ready', ports: Object.fromEntries(hosts.map((host) => [host.host, host.port])) });
