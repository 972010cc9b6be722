/**
 * Setup of the `unit` test project: a unit test opens no socket and starts no process. Connecting or listening
 * (TCP, HTTP, UDP) and spawning throw here, naming the rule, so a file that needs a loopback server or a child
 * process is moved to the `integration` list in vitest.config.ts instead of slowing the inner loop.
 * @module
 */
import childProcess from 'node:child_process';
import dgram from 'node:dgram';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { afterAll } from 'vitest';

function refuse(what: string): () => never {
  return () => {
    throw new Error(
      `a unit test may not ${what}: list this file in INTEGRATION in vitest.config.ts (see test/support/unit-guard.ts)`,
    );
  };
}

type Patch = [target: object, key: string, what: string];

const patches: Patch[] = [
  [net.Socket.prototype, 'connect', 'open a socket'],
  [net.Server.prototype, 'listen', 'listen on a socket'],
  [dgram.Socket.prototype, 'bind', 'bind a UDP socket'],
  [dgram.Socket.prototype, 'send', 'send a UDP datagram'],
  [childProcess.ChildProcess.prototype, 'spawn', 'start a process'],
  [childProcess, 'spawnSync', 'start a process'],
  [childProcess, 'execSync', 'start a process'],
  [childProcess, 'execFileSync', 'start a process'],
];

const originals = patches.map(([target, key]) => Reflect.get(target, key) as unknown);
for (const [target, key, what] of patches) Reflect.set(target, key, refuse(what));
syncBuiltinESMExports();

afterAll(() => {
  patches.forEach(([target, key], index) => {
    Reflect.set(target, key, originals[index]);
  });
  syncBuiltinESMExports();
});

// The code a verifier imports on its first probe (the SMTP check, the session pool and catch-all cache): loaded once
// here, ahead of the tests, into the worker's module cache (the unit project does not isolate files). Imported
// lazily inside a test, it once landed after vitest had torn the file's environment down, on a loaded machine.
await Promise.all([import('../../src/checks/smtp.js'), import('../../src/smtp/probing.js')]).then(
  ([check, probing]) => Promise.all([check.preloadSmtpCheck(), probing.smtpProbing.preload()]),
);
